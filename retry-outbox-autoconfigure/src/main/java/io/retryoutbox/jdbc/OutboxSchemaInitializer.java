package io.retryoutbox.jdbc;

import javax.sql.DataSource;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;

/**
 * Creates and upgrades the outbox tables with the starter's own Flyway migrations and
 * history table, so they never mix with the application's own migrations.
 */
public final class OutboxSchemaInitializer implements InitializingBean {

	/**
	 * Where the migrations are, inside the starter's jar.
	 */
	public static final String LOCATION = "classpath:io/retryoutbox/db/migration/postgresql";

	/**
	 * The Flyway history table of the outbox migrations.
	 */
	public static final String HISTORY_TABLE = "retry_outbox_schema_history";

	private final DataSource dataSource;

	private final @Nullable String schema;

	public OutboxSchemaInitializer(DataSource dataSource, @Nullable String schema) {
		this.dataSource = dataSource;
		this.schema = schema;
	}

	@Override
	public void afterPropertiesSet() {
		FluentConfiguration configuration = Flyway.configure(getClass().getClassLoader())
			.dataSource(this.dataSource)
			.locations(LOCATION)
			.table(HISTORY_TABLE)
			// The application's schema is usually not empty: start below V1 so V1 still
			// runs.
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.cleanDisabled(true);
		if (this.schema != null && !this.schema.isBlank()) {
			configuration.schemas(this.schema).defaultSchema(this.schema).createSchemas(true);
		}
		configuration.load().migrate();
	}

}
