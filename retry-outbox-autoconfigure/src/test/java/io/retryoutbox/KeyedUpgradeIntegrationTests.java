package io.retryoutbox;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.retryoutbox.jdbc.OutboxSchemaInitializer;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An outbox written under V6, with its key rows, keeps each key's order once the starter
 * has upgraded it to V7, which drops them: the heads go first, then what waited behind
 * them, and a head that was being released lets its successor go.
 */
class KeyedUpgradeIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@Test
	void deliversTheMessagesOfAVersionSixOutboxInTheirKeysOrderAfterTheUpgrade() {
		DriverManagerDataSource dataSource = new DriverManagerDataSource(this.jdbcUrl);
		Flyway.configure(getClass().getClassLoader())
			.dataSource(dataSource)
			.locations(OutboxSchemaInitializer.LOCATION)
			.table(OutboxSchemaInitializer.HISTORY_TABLE)
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.target("6")
			.load()
			.migrate();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		insert(jdbc, "/a/1", "a", "PENDING", true, false);
		insert(jdbc, "/a/2", "a", "PENDING", false, false);
		insert(jdbc, "/a/3", "a", "PENDING", false, false);
		insert(jdbc, "/b/1", "b", "DELIVERED", true, true);
		insert(jdbc, "/b/2", "b", "PENDING", false, false);
		jdbc.sql("INSERT INTO retry_outbox_key (ordering_key, unfinished) VALUES ('a', 3), ('b', 2)").update();
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.run((context) -> {
				await().atMost(Duration.ofSeconds(20)).until(() -> received().size() == 4);
				assertThat(received().stream().filter((path) -> path.startsWith("/a/"))).containsExactly("/a/1", "/a/2",
						"/a/3");
				assertThat(received()).contains("/b/2").doesNotContain("/b/1");
				await().atMost(Duration.ofSeconds(20))
					.until(() -> OutboxContexts.jdbc(context)
						.sql("SELECT count(*) FROM retry_outbox_message WHERE holds_key")
						.query(Long.class)
						.single() == 0);
				assertThat(OutboxContexts.jdbc(context)
					.sql("SELECT count(*) FROM information_schema.tables WHERE table_name = 'retry_outbox_key'")
					.query(Long.class)
					.single()).isZero();
			});
	}

	private List<String> received() {
		return this.destination.dispatcher().paths();
	}

	private static void insert(JdbcClient jdbc, String path, String key, String status, boolean head,
			boolean releasing) {
		UUID id = UUID.randomUUID();
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
					is_head, holds_key, releasing, delivered_at)
				VALUES (?, 'api', 'POST', ?, ?, ?, ?, ?, true, ?, CASE WHEN ? = 'DELIVERED' THEN now() END)
				""").params(id, path, key, id.toString(), status, head, releasing, status).update();
	}

}
