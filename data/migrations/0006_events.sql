CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`last4` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_user` ON `api_keys` (`user_id`);--> statement-breakpoint
CREATE TABLE `event_counters` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`last_seq` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `event_endpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`types_json` text,
	`secret_sealed` text NOT NULL,
	`state` text DEFAULT 'enabled' NOT NULL,
	`disabled_reason` text,
	`cursor` integer DEFAULT 0 NOT NULL,
	`batch_id` text,
	`batch_last` integer,
	`refusals` integer DEFAULT 0 NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`failing_since` integer,
	`next_attempt_at` integer DEFAULT 0 NOT NULL,
	`last_attempt_at` integer,
	`last_status` integer,
	`last_duration_ms` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `event_endpoints_user` ON `event_endpoints` (`user_id`);--> statement-breakpoint
CREATE TABLE `event_parked` (
	`endpoint_id` integer NOT NULL,
	`seq` integer NOT NULL,
	`last_status` integer,
	`parked_at` integer NOT NULL,
	PRIMARY KEY(`endpoint_id`, `seq`),
	FOREIGN KEY (`endpoint_id`) REFERENCES `event_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`message_id` integer,
	`status` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_user_seq` ON `events` (`user_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);