ALTER TABLE `messages` ADD `send_at` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `priority` integer;--> statement-breakpoint
CREATE INDEX `messages_queue` ON `messages` (`user_id`,`priority`,`send_at`,`id`) WHERE status IN ('queued', 'scheduled');--> statement-breakpoint
CREATE INDEX `messages_queue_expiry` ON `messages` (`expires_at`) WHERE status IN ('queued', 'scheduled') AND expires_at IS NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `messaging_rate` integer DEFAULT 80 NOT NULL;