-- A relay claims for each destination only what that destination's flow limit lets it send now,
-- and health reads the lag per destination it knows: with the destination leading the due-heads
-- index, each of those reads only its own destination's due heads, so one destination's backlog
-- never makes another's claim scan it.
DROP INDEX retry_outbox_message_due_idx;

CREATE INDEX retry_outbox_message_due_idx ON retry_outbox_message (destination, next_attempt_at)
	WHERE status = 'PENDING' AND is_head;
