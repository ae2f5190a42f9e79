CREATE TABLE orders (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	amount numeric(12, 2) NOT NULL CHECK (amount > 0),
	currency char(3) NOT NULL,
	status text NOT NULL CHECK (status IN ('PLACED', 'CANCELLED')),
	charge_message_id uuid,
	refund_message_id uuid,
	placed_at timestamptz NOT NULL
);
