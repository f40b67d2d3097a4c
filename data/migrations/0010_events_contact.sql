ALTER TABLE `events` ADD `contact_id` integer;--> statement-breakpoint
CREATE INDEX `messages_conversation_id` ON `messages` (`conversation_id`,`id`);--> statement-breakpoint
-- Inbound replies now list what the customer tapped (`reply`, read from the stored payload): their listed JSON is
-- rendered again at start-up (rows without it are filled then).
UPDATE `messages` SET `listed_json` = NULL WHERE `direction` = 'inbound' AND `type` IN ('interactive', 'button');
