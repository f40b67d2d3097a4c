CREATE TABLE `revoked_sessions` (
	`jti` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `revoked_sessions_expires` ON `revoked_sessions` (`expires_at`);--> statement-breakpoint
ALTER TABLE `webhook_events` ADD `attempts` integer DEFAULT 0 NOT NULL;