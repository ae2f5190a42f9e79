package io.retryoutbox.sample.database;

import java.io.IOException;

import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * Starts an embedded PostgreSQL server and makes it the application's {@code DataSource}
 * when {@code spring.datasource.url} is not set; with it set, Boot's own data source is
 * used.
 * <p>
 * The server is a bean, so it stops with the context, after everything that uses it.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(EmbeddedDatabaseConfiguration.NoDataSourceUrlCondition.class)
@EnableConfigurationProperties(EmbeddedDatabaseProperties.class)
class EmbeddedDatabaseConfiguration {

	@Bean(destroyMethod = "close")
	EmbeddedPostgres embeddedPostgres(EmbeddedDatabaseProperties properties) throws IOException {
		return EmbeddedPostgresLauncher.start(properties);
	}

	@Bean
	@ConfigurationProperties("spring.datasource.hikari")
	HikariDataSource dataSource(EmbeddedPostgres postgres) {
		return DataSourceBuilder.create()
			.type(HikariDataSource.class)
			.url(postgres.getJdbcUrl("postgres", "postgres"))
			.build();
	}

	static class NoDataSourceUrlCondition extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			if (StringUtils.hasText(context.getEnvironment().getProperty("spring.datasource.url"))) {
				return ConditionOutcome.noMatch("spring.datasource.url is set");
			}
			return ConditionOutcome.match("spring.datasource.url is not set");
		}

	}

}
