-- Each outbound message's status history moves into its own row (messages.statuses_json), in the order the history was read in.
ALTER TABLE `messages` ADD `statuses_json` text;--> statement-breakpoint
UPDATE `messages` SET `statuses_json` = (SELECT json_group_array(json_array(s.status, s.at, s.error_json, s.pricing_json) ORDER BY s.at, s.id)
  FROM `message_statuses` s WHERE s.message_id = `messages`.`id`) WHERE `direction` = 'outbound';--> statement-breakpoint
DROP TABLE `message_statuses`;
