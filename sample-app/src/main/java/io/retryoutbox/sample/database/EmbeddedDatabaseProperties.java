package io.retryoutbox.sample.database;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the embedded PostgreSQL server, used when
 * {@code spring.datasource.url} is not set.
 */
@ConfigurationProperties("sample.embedded-database")
public class EmbeddedDatabaseProperties {

	/**
	 * Directory that keeps the data between runs; when empty, a temporary directory that
	 * is deleted on shutdown.
	 */
	private String dataDirectory = "target/sample-db";

	/**
	 * Port of the server; 0 for a free one.
	 */
	private int port = 54329;

	public String getDataDirectory() {
		return this.dataDirectory;
	}

	public void setDataDirectory(String dataDirectory) {
		this.dataDirectory = dataDirectory;
	}

	public int getPort() {
		return this.port;
	}

	public void setPort(int port) {
		this.port = port;
	}

}
