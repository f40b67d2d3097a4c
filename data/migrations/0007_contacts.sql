CREATE TABLE `contacts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`wa_id` text,
	`bsuid` text,
	`parent_bsuid` text,
	`username` text,
	`name` text,
	`aliases_json` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contacts_user_wa_id` ON `contacts` (`user_id`,`wa_id`) WHERE wa_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `contacts_user_bsuid` ON `contacts` (`user_id`,`bsuid`) WHERE bsuid IS NOT NULL;--> statement-breakpoint
DROP INDEX `conversations_user_contact`;--> statement-breakpoint
ALTER TABLE `conversations` ADD `contact_id` integer REFERENCES contacts(id) ON DELETE cascade;--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_contact` ON `conversations` (`contact_id`);--> statement-breakpoint
ALTER TABLE `message_statuses` ADD `pricing_json` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `origin` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `pricing_json` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `edited_at` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `edits_json` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `revoked` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Every existing conversation becomes a contact with the same id: its number (or, for an older payload that named the
-- user by a business-scoped user id, that id) and its name. Messages, statuses, media and credits are not touched.
INSERT INTO `contacts` (`id`, `user_id`, `wa_id`, `bsuid`, `name`, `aliases_json`, `created_at`, `updated_at`)
  SELECT `id`, `user_id`,
    CASE WHEN `contact_wa_id` GLOB '[A-Z][A-Z].?*' AND `contact_wa_id` NOT GLOB '*[^A-Za-z0-9.]*' THEN NULL ELSE `contact_wa_id` END,
    CASE WHEN `contact_wa_id` GLOB '[A-Z][A-Z].?*' AND `contact_wa_id` NOT GLOB '*[^A-Za-z0-9.]*' THEN `contact_wa_id` END,
    `contact_name`, '[]', `last_message_at`, `last_message_at`
  FROM `conversations`;--> statement-breakpoint
UPDATE `conversations` SET `contact_id` = `id`;--> statement-breakpoint
-- Outbound messages now say where they were sent from (`origin`): rendered again at start-up.
UPDATE `messages` SET `listed_json` = NULL WHERE `direction` = 'outbound';
