-- In a migration of its own, so in a transaction of its own: validating takes a lock that lets the
-- application read and write the tables while their rows are checked.
ALTER TABLE retry_outbox_message VALIDATE CONSTRAINT retry_outbox_message_status_check;

ALTER TABLE retry_outbox_attempt VALIDATE CONSTRAINT retry_outbox_attempt_outcome_check;
