CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`actor_user_id` integer,
	`actor_email` text,
	`action` text NOT NULL,
	`target_user_id` integer,
	`target_email` text,
	`details_json` text DEFAULT '{}' NOT NULL,
	`client_ip` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_target` ON `audit_log` (`target_user_id`);