-- Per-key FIFO. Only a key's head may be claimed; retry_outbox_key counts each key's unfinished
-- messages, and its row lock serializes an enqueue with the promotion of the next head, so a
-- successor committed concurrently is never missed. A finished head is first marked releasing;
-- relays then release keys in their own transactions, skipping keys an enqueue holds, so a relay
-- never waits on an application transaction while holding another key.
CREATE TABLE retry_outbox_key (
	ordering_key text PRIMARY KEY,
	unfinished integer NOT NULL
);

ALTER TABLE retry_outbox_message
	ADD COLUMN is_head boolean NOT NULL DEFAULT true,
	ADD COLUMN holds_key boolean NOT NULL DEFAULT false,
	ADD COLUMN releasing boolean NOT NULL DEFAULT false;

UPDATE retry_outbox_message m
SET holds_key = true,
	is_head = m.seq = (SELECT min(x.seq) FROM retry_outbox_message x
		WHERE x.ordering_key = m.ordering_key AND x.status IN ('PENDING', 'IN_FLIGHT'))
WHERE m.ordering_key IS NOT NULL AND m.status IN ('PENDING', 'IN_FLIGHT');

INSERT INTO retry_outbox_key (ordering_key, unfinished)
SELECT ordering_key, count(*) FROM retry_outbox_message WHERE holds_key GROUP BY ordering_key;

DROP INDEX retry_outbox_message_due_idx;

-- The claim reads only due heads, so it costs O(batch) however many rows wait behind their heads.
CREATE INDEX retry_outbox_message_due_idx ON retry_outbox_message (next_attempt_at)
	WHERE status = 'PENDING' AND is_head;

CREATE INDEX retry_outbox_message_successor_idx ON retry_outbox_message (ordering_key, seq)
	WHERE status = 'PENDING' AND NOT is_head;

CREATE INDEX retry_outbox_message_key_head_idx ON retry_outbox_message (ordering_key)
	WHERE is_head AND holds_key;

CREATE INDEX retry_outbox_message_releasing_idx ON retry_outbox_message (ordering_key) WHERE releasing;
