ALTER TABLE `webhook_events` ADD `user_id` integer REFERENCES users(id) ON DELETE cascade;--> statement-breakpoint
CREATE INDEX `webhook_events_user` ON `webhook_events` (`user_id`);--> statement-breakpoint
CREATE INDEX `webhook_events_processed_received` ON `webhook_events` (`received_at`) WHERE state = 'processed';