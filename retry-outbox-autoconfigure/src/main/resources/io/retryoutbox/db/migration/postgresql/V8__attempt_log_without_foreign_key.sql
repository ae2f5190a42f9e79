-- The outcome write inserts each message's attempt-log row in the statement that updates the
-- message, and the foreign key checked every such row through the message's primary key with a
-- row lock: about a third of that statement's time. Only the starter writes attempt rows, always
-- for a message it has just updated, and retention and discard delete them with their message.
ALTER TABLE retry_outbox_attempt DROP CONSTRAINT IF EXISTS retry_outbox_attempt_message_id_fkey;
