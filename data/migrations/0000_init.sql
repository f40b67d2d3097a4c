CREATE TABLE `conversations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`contact_wa_id` text NOT NULL,
	`contact_name` text,
	`last_message_at` integer NOT NULL,
	`last_inbound_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_user_contact` ON `conversations` (`user_id`,`contact_wa_id`);--> statement-breakpoint
CREATE INDEX `conversations_user_last` ON `conversations` (`user_id`,`last_message_at`);--> statement-breakpoint
CREATE TABLE `credit_usage` (
	`user_id` integer NOT NULL,
	`month` text NOT NULL,
	`used` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`user_id`, `month`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`user_id` integer NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `key`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `message_statuses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message_id` integer NOT NULL,
	`status` text NOT NULL,
	`at` integer NOT NULL,
	`error_json` text,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `message_statuses_once` ON `message_statuses` (`message_id`,`status`,`at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`direction` text NOT NULL,
	`type` text NOT NULL,
	`text` text,
	`to_number` text,
	`wamid` text,
	`status` text NOT NULL,
	`status_rank` integer DEFAULT 0 NOT NULL,
	`error_json` text,
	`payload_json` text NOT NULL,
	`template_json` text,
	`media_json` text,
	`location_json` text,
	`reply_to` text,
	`created_at` integer NOT NULL,
	`status_updated_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_user_wamid` ON `messages` (`user_id`,`wamid`);--> statement-breakpoint
CREATE INDEX `messages_conversation_created` ON `messages` (`conversation_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_conversation_type_created` ON `messages` (`conversation_id`,`type`,`created_at`);--> statement-breakpoint
CREATE TABLE `orphan_statuses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`wamid` text NOT NULL,
	`status` text NOT NULL,
	`at` integer NOT NULL,
	`error_json` text,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `orphan_statuses_once` ON `orphan_statuses` (`user_id`,`wamid`,`status`,`at`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`sso_id` text,
	`role` text DEFAULT 'CLIENT' NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`messaging_token` text,
	`messaging_phone_number_id` text,
	`monthly_credits` integer DEFAULT 0 NOT NULL,
	`token_version` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_messaging_phone_number_id_unique` ON `users` (`messaging_phone_number_id`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`received_at` integer NOT NULL,
	`raw_body` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`error` text,
	`processed_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_events_state` ON `webhook_events` (`state`) WHERE state <> 'processed';