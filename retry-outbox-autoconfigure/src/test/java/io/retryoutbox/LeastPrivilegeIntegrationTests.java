package io.retryoutbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.retryoutbox.autoconfigure.OutboxRetentionAutoConfiguration;
import io.retryoutbox.jdbc.OutboxSchemaInitializer;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.retention.OutboxRetention;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The starter runs under a login role that has nothing but {@code USAGE} on the outbox
 * schema and DML on the outbox tables, granted by the README's statements as written
 * there, while another role owns the tables and ran the migrations.
 */
class LeastPrivilegeIntegrationTests {

	private static final Path README = Path.of(System.getProperty("user.dir")).resolve("../README.md").normalize();

	private static final String SECTION_HEADING = "### A runtime role with DML only";

	private static final String INSUFFICIENT_PRIVILEGE = "42501";

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String adminUrl = TestDatabase.createDatabase();

	private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);

	private final String owner = "outbox_owner_" + this.suffix;

	private final String runtime = "orders_app_" + this.suffix;

	@BeforeEach
	void createTheRolesAndTheSchemaOwnedByTheOwner() throws SQLException {
		execute(this.adminUrl, "CREATE ROLE " + this.owner + " LOGIN", "CREATE ROLE " + this.runtime + " LOGIN",
				"CREATE SCHEMA outbox AUTHORIZATION " + this.owner);
		new OutboxSchemaInitializer(new DriverManagerDataSource(urlOf(this.owner)), "outbox").afterPropertiesSet();
	}

	@AfterEach
	void dropTheRoles() throws SQLException {
		execute(this.adminUrl, "DROP SCHEMA outbox CASCADE", "DROP OWNED BY " + this.owner + ", " + this.runtime,
				"DROP ROLE " + this.runtime, "DROP ROLE " + this.owner);
	}

	@Test
	void theReadmeGrantsCoverEveryOutboxTableWithDmlAndNothingMore() throws SQLException {
		grantAsTheReadmeSays();
		JdbcClient admin = JdbcClient.create(new DriverManagerDataSource(this.adminUrl));
		List<String> tables = admin.sql("""
				SELECT table_name FROM information_schema.tables
				WHERE table_schema = 'outbox' AND table_name <> ?
				ORDER BY table_name""").param(OutboxSchemaInitializer.HISTORY_TABLE).query(String.class).list();
		assertThat(tables).as("the outbox tables the migrations created").isNotEmpty();
		for (String table : tables) {
			for (String privilege : List.of("SELECT", "INSERT", "UPDATE", "DELETE")) {
				assertThat(hasTablePrivilege(admin, table, privilege))
					.as("%s on outbox.%s granted by the README", privilege, table)
					.isTrue();
			}
			for (String privilege : List.of("TRUNCATE", "REFERENCES", "TRIGGER")) {
				assertThat(hasTablePrivilege(admin, table, privilege)).as("%s on outbox.%s", privilege, table)
					.isFalse();
			}
		}
		assertThat(hasTablePrivilege(admin, OutboxSchemaInitializer.HISTORY_TABLE, "SELECT"))
			.as("SELECT on the migrations' history table")
			.isFalse();
		assertThat(admin.sql("SELECT has_schema_privilege(?, 'outbox', 'CREATE')")
			.param(this.runtime)
			.query(Boolean.class)
			.single()).as("CREATE on the schema").isFalse();
	}

	@Test
	void theRuntimeRoleEnqueuesDeliversRetriesPausesDeadLettersReplaysAndDeletes() throws SQLException {
		grantAsTheReadmeSays();
		this.destination.dispatcher()
			.answer("/api/flaky", new MockResponse.Builder().code(500).build(),
					new MockResponse.Builder().code(200).build())
			.answer("/api/busy", new MockResponse.Builder().code(503).setHeader("Retry-After", "1").build(),
					new MockResponse.Builder().code(200).build())
			.answer("/api/refused", new MockResponse.Builder().code(400).build(),
					new MockResponse.Builder().code(200).build());
		OutboxContexts.runner(urlOf(this.runtime))
			.withConfiguration(AutoConfigurations.of(OutboxRetentionAutoConfiguration.class))
			.withPropertyValues("retry-outbox.jdbc.initialize-schema=false", "retry-outbox.jdbc.schema=outbox",
					"retry-outbox.destinations.payments.base-url=http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.retry.delay=50ms", "retry-outbox.retry.jitter=0",
					"retry-outbox.ordering.on-dead=block", "retry-outbox.attempt-log.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				UUID delivered = send(context, "/ok", "a");
				UUID retried = send(context, "/flaky", "b");
				UUID paused = send(context, "/busy", "c");
				UUID refused = send(context, "/refused", "d");
				UUID parked = send(context, "/after-refused", "d");
				awaitStatus(context, delivered, "DELIVERED");
				awaitStatus(context, retried, "DELIVERED");
				awaitStatus(context, paused, "DELIVERED");
				awaitStatus(context, refused, "DEAD");
				assertThat(row(context, retried)).containsEntry("attempts", 2);
				assertThat(OutboxContexts.jdbc(context)
					.sql("SELECT count(*) FROM outbox.retry_outbox_pause WHERE destination = 'payments'")
					.query(Long.class)
					.single()).as("pauses written by the runtime role").isPositive();
				assertThat(row(context, parked)).containsEntry("status", "PENDING");
				assertThat(context.getBean(OutboxRepair.class).replay(refused, "test")).isTrue();
				awaitStatus(context, refused, "DELIVERED");
				awaitStatus(context, parked, "DELIVERED");
				assertThat(OutboxContexts.jdbc(context)
					.sql("SELECT count(*) FROM outbox.retry_outbox_attempt")
					.query(Long.class)
					.single()).as("attempts logged by the runtime role").isGreaterThanOrEqualTo(7);
				assertThat(context.getBean(OutboxRetention.class).deleteDelivered(Duration.ZERO)).isEqualTo(5);
			});
		try (Connection connection = DriverManager.getConnection(urlOf(this.runtime));
				Statement statement = connection.createStatement()) {
			assertThatExceptionOfType(SQLException.class)
				.isThrownBy(() -> statement.execute("CREATE TABLE outbox.intruder (id int)"))
				.satisfies((ex) -> assertThat(ex.getSQLState()).isEqualTo(INSUFFICIENT_PRIVILEGE));
			assertThatExceptionOfType(SQLException.class)
				.isThrownBy(() -> statement.execute("TRUNCATE outbox.retry_outbox_message"))
				.satisfies((ex) -> assertThat(ex.getSQLState()).isEqualTo(INSUFFICIENT_PRIVILEGE));
		}
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aRuntimeRoleThatMayNotCreateTemporaryTablesStartsWithoutTheWarmUpsRehearsalAndDelivers(CapturedOutput output)
			throws SQLException {
		grantAsTheReadmeSays();
		String database = JdbcClient.create(new DriverManagerDataSource(this.adminUrl))
			.sql("SELECT current_database()")
			.query(String.class)
			.single();
		execute(this.adminUrl, "REVOKE TEMPORARY ON DATABASE \"" + database + "\" FROM PUBLIC");
		OutboxContexts.runner(urlOf(this.runtime))
			.withPropertyValues("retry-outbox.jdbc.initialize-schema=false", "retry-outbox.jdbc.schema=outbox",
					"retry-outbox.destinations.payments.base-url=http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.relay.warm-up.enabled=true", "retry-outbox.relay.warm-up.requests=300")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Outbox relay warmed up with 50 requests")
					.contains(
							"The outbox relay's warm-up did not rehearse its rounds on temporary copies of the outbox tables: ")
					.contains("permission denied to create temporary tables");
				UUID delivered = send(context, "/after-the-warm-up", "a");
				awaitStatus(context, delivered, "DELIVERED");
			});
	}

	private void grantAsTheReadmeSays() throws SQLException {
		execute(urlOf(this.owner), readmeGrants().replace("orders_app", this.runtime));
	}

	private boolean hasTablePrivilege(JdbcClient admin, String table, String privilege) {
		return admin.sql("SELECT has_table_privilege(?, ?, ?)")
			.params(this.runtime, "outbox." + table, privilege)
			.query(Boolean.class)
			.single();
	}

	private static UUID send(AssertableApplicationContext context, String path, String orderingKey) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post("payments", path).orderingKey(orderingKey).build()));
	}

	private static Map<String, Object> row(AssertableApplicationContext context, UUID id) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT * FROM outbox.retry_outbox_message WHERE id = ?")
			.param(id)
			.query()
			.singleRow();
	}

	private static void awaitStatus(AssertableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(row(context, id)).containsEntry("status", status));
	}

	/**
	 * The test database's URL, connecting as {@code role} (the servers the tests use
	 * trust local connections).
	 */
	private String urlOf(String role) {
		String url = this.adminUrl.replaceAll("([?&])password=[^&]*&?", "$1");
		Matcher user = Pattern.compile("([?&])user=[^&]*").matcher(url);
		return user.find() ? user.replaceFirst("$1user=" + role)
				: url + (url.contains("?") ? "&" : "?") + "user=" + role;
	}

	private static void execute(String url, String... statements) throws SQLException {
		try (Connection connection = DriverManager.getConnection(url);
				Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				statement.execute(sql);
			}
		}
	}

	private static String readmeGrants() {
		String readme;
		try {
			readme = Files.readString(README).replace("\r\n", "\n");
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not read " + README, ex);
		}
		int start = readme.indexOf("\n" + SECTION_HEADING + "\n");
		assertThat(start).as("'%s' in %s", SECTION_HEADING, README).isNotNegative();
		int open = readme.indexOf("```sql\n", start);
		int close = readme.indexOf("\n```", open);
		assertThat(open).as("an SQL block in '%s'", SECTION_HEADING).isPositive();
		assertThat(readme.indexOf("\n#", start + 1)).as("the SQL block inside '%s'", SECTION_HEADING)
			.isGreaterThan(close);
		return readme.substring(open + "```sql\n".length(), close);
	}

}
