DROP INDEX `messages_conversation_created`;--> statement-breakpoint
DROP INDEX `messages_conversation_type_created`;--> statement-breakpoint
CREATE INDEX `messages_conversation_created` ON `messages` (`conversation_id`,`created_at`,`id`,`type`);--> statement-breakpoint
CREATE INDEX `messages_conversation_type_created` ON `messages` (`conversation_id`,`type`,`created_at`) WHERE type <> 'text';