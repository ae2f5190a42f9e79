-- Health and the gauges count and age the unfinished messages; without this index each of those
-- figures scans every retained DELIVERED row. Status and destination are included so that the
-- counts of pending rows, and of those whose destination an instance does not know, read the index
-- alone, and created_at leads so that the oldest unfinished message is found in one probe.
CREATE INDEX retry_outbox_message_unfinished_idx ON retry_outbox_message (created_at) INCLUDE (status, destination)
	WHERE status IN ('PENDING', 'IN_FLIGHT');
