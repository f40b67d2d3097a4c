CREATE TABLE `media_downloads` (
	`message_id` integer PRIMARY KEY NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer DEFAULT 0 NOT NULL,
	`first_attempt_at` integer,
	`error` text,
	`mime_type` text,
	`size` integer,
	`settled_at` integer,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `media_downloads_due` ON `media_downloads` (`next_attempt_at`) WHERE state = 'pending';--> statement-breakpoint
-- Inbound media stored before the archive existed: queued once (media the network no longer keeps fail with the lookup's 4xx),
-- and their listed JSON rendered again at start-up with the archive fields.
INSERT INTO `media_downloads` (`message_id`) SELECT `id` FROM `messages`
  WHERE `direction` = 'inbound' AND `type` IN ('image', 'audio', 'video', 'document', 'sticker') AND json_valid(`media_json`)
    AND json_extract(`media_json`, '$.id') IS NOT NULL;--> statement-breakpoint
UPDATE `messages` SET `listed_json` = NULL WHERE `media_json` IS NOT NULL AND `direction` = 'inbound';
