package io.retryoutbox.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import io.retryoutbox.relay.DestinationPause;
import io.retryoutbox.relay.PauseReason;
import io.retryoutbox.relay.PauseStore;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The {@link PauseStore} on PostgreSQL: one row per pause, the open one (no
 * {@code ended_at}) being the destination's current pause. Every time is the database's
 * {@code now()}, so that instances whose clocks differ agree on when a pause ends.
 */
final class JdbcPauseStore implements PauseStore {

	// Of two pauses, the later end wins: an instance that saw a shorter Retry-After
	// must not cut short what another was told.
	private static final String PAUSE = """
			INSERT INTO {pause} AS p (destination, started_at, paused_until, reason, detail, paused_by, updated_at)
			VALUES (?, now(), now() + ? * interval '1 millisecond', ?, ?, ?, now())
			ON CONFLICT (destination) WHERE ended_at IS NULL DO UPDATE
			SET paused_until = excluded.paused_until, reason = excluded.reason, detail = excluded.detail,
				paused_by = excluded.paused_by, updated_at = now()
			WHERE excluded.paused_until > p.paused_until
			""";

	// A probe that got through ends only a pause that is over: one another instance
	// extended since (its own probe failed, or it was told to wait) stays.
	private static final String END_IF_OVER = """
			UPDATE {pause} SET ended_at = now(), updated_at = now()
			WHERE destination = ? AND ended_at IS NULL AND paused_until <= now()
			""";

	private static final String END = """
			UPDATE {pause} SET ended_at = now(), updated_at = now() WHERE destination = ? AND ended_at IS NULL
			""";

	private static final String PRUNE = "DELETE FROM {pause} WHERE destination = ? AND ended_at <= ?";

	// The left join gives the database's time even when no destination is paused.
	private static final String READ = """
			SELECT n.now, p.destination, p.started_at, p.ended_at, p.paused_until, p.reason, p.detail, p.paused_by
			FROM (SELECT now() AS now) n
			LEFT JOIN {pause} p ON p.ended_at IS NULL OR p.ended_at > ?
			ORDER BY p.destination, p.started_at
			""";

	private final JdbcClient jdbc;

	private final String pause;

	private final String endIfOver;

	private final String end;

	private final String prune;

	private final String read;

	JdbcPauseStore(DataSource dataSource, OutboxTables tables) {
		this.jdbc = JdbcClient.create(dataSource);
		this.pause = Sql.render(PAUSE, tables);
		this.endIfOver = Sql.render(END_IF_OVER, tables);
		this.end = Sql.render(END, tables);
		this.prune = Sql.render(PRUNE, tables);
		this.read = Sql.render(READ, tables);
	}

	@Override
	public void pause(String destination, Duration pause, PauseReason reason, String detail, String pausedBy) {
		this.jdbc.sql(this.pause)
			.params(destination, Math.max(0, pause.toMillis()), reason.name(), detail, pausedBy)
			.update();
	}

	@Override
	public boolean endIfOver(String destination) {
		return this.jdbc.sql(this.endIfOver).param(destination).update() > 0;
	}

	@Override
	public boolean end(String destination) {
		return this.jdbc.sql(this.end).param(destination).update() > 0;
	}

	@Override
	public int prune(String destination, Instant endedBefore) {
		return this.jdbc.sql(this.prune).params(destination, timestamp(endedBefore)).update();
	}

	@Override
	public Snapshot read(Instant endedAfter) {
		List<DestinationPause> pauses = new ArrayList<>();
		Instant now = this.jdbc.sql(this.read).param(timestamp(endedAfter)).query((ResultSet rs) -> {
			Instant time = null;
			while (rs.next()) {
				time = instant(rs, "now");
				if (rs.getString("destination") != null) {
					pauses.add(pause(rs));
				}
			}
			return time;
		});
		return new Snapshot(now, pauses);
	}

	private static DestinationPause pause(ResultSet rs) throws SQLException {
		return new DestinationPause(rs.getString("destination"), instant(rs, "started_at"),
				nullableInstant(rs, "ended_at"), instant(rs, "paused_until"),
				PauseReason.valueOf(rs.getString("reason")), rs.getString("detail"), rs.getString("paused_by"));
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, OffsetDateTime.class).toInstant();
	}

	private static @Nullable Instant nullableInstant(ResultSet rs, String column) throws SQLException {
		OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
		return (value != null) ? value.toInstant() : null;
	}

	private static OffsetDateTime timestamp(Instant instant) {
		return instant.atOffset(ZoneOffset.UTC);
	}

}
