ALTER TABLE `users` ADD `session_epoch` text DEFAULT '' NOT NULL;--> statement-breakpoint
-- Every existing user gets its own random epoch; sessions issued before this version carry none and end (one new login).
UPDATE `users` SET `session_epoch` = lower(hex(randomblob(16)));
