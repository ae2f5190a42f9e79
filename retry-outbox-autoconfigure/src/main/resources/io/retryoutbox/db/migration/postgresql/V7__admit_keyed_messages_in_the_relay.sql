-- An enqueue no longer writes a shared row: a keyed message is inserted as an arrival (new_arrival),
-- not the head, and a relay admits it, under a transaction-level advisory lock per key that only
-- relays take and never wait for: it becomes the head if nothing of its key holds it (the oldest
-- arrival, by seq, when several came), else it waits behind the head. The promotion of a finished
-- head's successor takes the same lock, so the two never miss each other, and the enqueuing
-- transaction, holding nothing, neither waits for a relay nor deadlocks with another enqueue.
ALTER TABLE retry_outbox_message ADD COLUMN new_arrival boolean NOT NULL DEFAULT false;

CREATE INDEX retry_outbox_message_arrival_idx ON retry_outbox_message (ordering_key, seq) WHERE new_arrival;

-- Waiting messages only; arrivals have their own index, so an enqueue adds one entry, not two.
DROP INDEX retry_outbox_message_successor_idx;

CREATE INDEX retry_outbox_message_successor_idx ON retry_outbox_message (ordering_key, seq)
	WHERE status = 'PENDING' AND NOT is_head AND NOT new_arrival;

DROP TABLE retry_outbox_key;
