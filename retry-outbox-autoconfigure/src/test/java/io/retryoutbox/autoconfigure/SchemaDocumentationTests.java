package io.retryoutbox.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

import io.retryoutbox.jdbc.OutboxSchemaInitializer;
import org.flywaydb.core.api.MigrationVersion;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks that the README's section on the schema holds the SQL of every migration the
 * starter ships, verbatim and in order, for those who apply it themselves
 * ({@code retry-outbox.jdbc.initialize-schema=false}), so that it cannot drift from the
 * migrations.
 */
class SchemaDocumentationTests {

	private static final String SECTION_HEADING = "### The schema";

	private static final Path README = Path.of(System.getProperty("user.dir")).resolve("../README.md").normalize();

	@Test
	void readmeHoldsEveryMigrationVerbatimInOrder() {
		List<Resource> migrations = migrations();
		assertThat(migrations).as("migrations in %s", OutboxSchemaInitializer.LOCATION).isNotEmpty();
		String section = readmeSection();
		int previous = -1;
		for (Resource migration : migrations) {
			String documented = "#### `" + migration.getFilename() + "`\n\n```sql\n" + normalized(read(migration))
					+ "\n```\n";
			int index = section.indexOf(documented);
			assertThat(index)
				.as("README's '%s' holds %s verbatim, headed by its name", SECTION_HEADING, migration.getFilename())
				.isNotNegative();
			assertThat(index).as("README's position of %s, after the migration before it", migration.getFilename())
				.isGreaterThan(previous);
			previous = index;
		}
		assertThat(section.split("```sql\n", -1))
			.as("README's SQL blocks in '%s', one for each migration", SECTION_HEADING)
			.hasSize(migrations.size() + 1);
	}

	private static List<Resource> migrations() {
		try {
			Resource[] resources = new PathMatchingResourcePatternResolver()
				.getResources(OutboxSchemaInitializer.LOCATION + "/*.sql");
			return Arrays.stream(resources).sorted(Comparator.comparing(SchemaDocumentationTests::version)).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static MigrationVersion version(Resource migration) {
		String name = migration.getFilename();
		assertThat(name).as("name of a versioned migration").matches("V[0-9._]+__.+\\.sql");
		return MigrationVersion.fromVersion(name.substring(1, name.indexOf("__")));
	}

	/**
	 * The README's text below {@link #SECTION_HEADING} up to the next heading of the same
	 * or a higher level.
	 */
	private static String readmeSection() {
		String readme = normalized(readReadme());
		int start = readme.indexOf("\n" + SECTION_HEADING + "\n");
		assertThat(start).as("'%s' in %s", SECTION_HEADING, README).isNotNegative();
		int end = readme.length();
		for (String next : List.of("\n## ", "\n### ")) {
			int index = readme.indexOf(next, start + 1);
			if (index >= 0) {
				end = Math.min(end, index);
			}
		}
		return readme.substring(start, end) + "\n";
	}

	/**
	 * The text with {@code \n} line endings, without trailing whitespace on its lines or
	 * trailing blank lines.
	 */
	private static String normalized(String text) {
		return text.replace("\r\n", "\n")
			.replace('\r', '\n')
			.lines()
			.map(String::stripTrailing)
			.collect(Collectors.joining("\n"))
			.stripTrailing();
	}

	private static String read(Resource resource) {
		try {
			return resource.getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String readReadme() {
		assertThat(README).as("the README, found from the module directory").isRegularFile();
		try {
			return Files.readString(README);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
