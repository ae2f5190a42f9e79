package io.retryoutbox.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import io.retryoutbox.retry.RetrySettings;
import org.assertj.core.api.SoftAssertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks the README's table of configuration properties against the configuration
 * metadata that the build generates from the properties' Javadoc and field initializers
 * (plus {@code additional-spring-configuration-metadata.json}), so that the table cannot
 * drift from the code.
 */
class ConfigurationPropertiesDocumentationTests {

	private static final List<String> DOCUMENTED_PREFIXES = List.of("retry-outbox.", "management.endpoint.outbox.",
			"management.health.retryoutbox.");

	/**
	 * The properties of a destination are values of a {@code Map}, which the annotation
	 * processor cannot describe, so the README's rows for them have no counterpart.
	 */
	private static final String DESTINATION_ROWS = "retry-outbox.destinations.<name>.";

	private static final String TABLE_HEADING = "## Configuration properties";

	private static final Path README = Path.of(System.getProperty("user.dir")).resolve("../README.md").normalize();

	private final Map<String, Property> metadata = readMetadata();

	private final Map<String, Row> rows = readReadmeTable();

	@Test
	void everyPropertyInTheMetadataHasARowWithItsDefaultAndDescription() {
		assertThat(this.metadata).as("documented properties in the metadata").isNotEmpty();
		SoftAssertions softly = new SoftAssertions();
		this.metadata.values().forEach((property) -> {
			Row row = this.rows.get(property.name());
			softly.assertThat(row).as("README row of %s", property.name()).isNotNull();
			if (row != null) {
				softly.assertThat(normalized(property.type(), row.defaultValue()))
					.as("README default of %s (%s)", property.name(), property.type())
					.isEqualTo(normalized(property.type(), property.defaultValue()));
				softly.assertThat(row.meaning())
					.as("README meaning of %s", property.name())
					.isEqualTo(property.description());
			}
		});
		softly.assertAll();
	}

	@Test
	void everyRowNamesAPropertyInTheMetadata() {
		assertThat(this.rows.keySet()).filteredOn((name) -> !name.startsWith(DESTINATION_ROWS))
			.as("README rows without a property in the metadata")
			.allSatisfy((name) -> assertThat(this.metadata).containsKey(name));
	}

	/**
	 * The retry settings have no field initializers, because a destination's must stay
	 * unset to inherit the global ones, so their defaults in the metadata are
	 * hand-written and must be those of {@link RetrySettings#DEFAULTS}, one property per
	 * component.
	 */
	@Test
	void handWrittenRetryDefaultsInTheMetadataAreThePolicyDefaults() {
		SoftAssertions softly = new SoftAssertions();
		for (RecordComponent component : RetrySettings.class.getRecordComponents()) {
			String name = "retry-outbox.retry." + kebabCase(component.getName());
			Property property = this.metadata.get(name);
			softly.assertThat(property).as("metadata of %s", name).isNotNull();
			if (property != null) {
				softly.assertThat(sortedIfSet(property.type(), normalized(property.type(), property.defaultValue())))
					.as("metadata default of %s", name)
					.isEqualTo(sortedIfSet(property.type(),
							normalized(property.type(), text(value(component, RetrySettings.DEFAULTS)))));
			}
		}
		softly.assertAll();
	}

	private static String kebabCase(String camelCase) {
		return camelCase.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
	}

	private static Object value(RecordComponent component, Object record) {
		try {
			return component.getAccessor().invoke(record);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String text(Object value) {
		if (value instanceof Collection<?> collection) {
			return String.join(",", collection.stream().map(String::valueOf).toList());
		}
		return String.valueOf(value);
	}

	/**
	 * A set's default in the record has no order, so sets compare sorted.
	 */
	private static @Nullable Object sortedIfSet(String type, @Nullable Object value) {
		if (type.startsWith("java.util.Set<") && value instanceof List<?> list) {
			return list.stream().map(String::valueOf).sorted().toList();
		}
		return value;
	}

	/**
	 * Reads the documented properties from every metadata file on the classpath; those of
	 * Boot's own jars have none. A property in the generated file wins over the same one
	 * in the additional file, which the build has merged into it already.
	 */
	private static Map<String, Property> readMetadata() {
		Map<String, Property> properties = new LinkedHashMap<>();
		Stream
			.of("META-INF/spring-configuration-metadata.json", "META-INF/additional-spring-configuration-metadata.json")
			.flatMap((resource) -> resources(resource).stream())
			.forEach((url) -> readTree(url).path("properties").forEach((node) -> {
				String name = node.path("name").asString();
				if (DOCUMENTED_PREFIXES.stream().anyMatch(name::startsWith)) {
					properties.putIfAbsent(name, new Property(name, node.path("type").asString(""),
							defaultValue(node.get("defaultValue")), node.path("description").asString("")));
				}
			}));
		return properties;
	}

	private static @Nullable String defaultValue(@Nullable JsonNode value) {
		if (value == null || value.isNull()) {
			return null;
		}
		if (value.isArray()) {
			List<String> elements = new ArrayList<>();
			value.forEach((element) -> elements.add(element.asString()));
			return String.join(",", elements);
		}
		return value.asString();
	}

	/**
	 * Reads the rows of the table below {@code ## Configuration properties}: property,
	 * default and meaning, each in backticks where it is code.
	 */
	private static Map<String, Row> readReadmeTable() {
		List<String> lines = readLines(README);
		int start = lines.indexOf(TABLE_HEADING);
		assertThat(start).as("'%s' in %s", TABLE_HEADING, README).isNotNegative();
		Map<String, Row> rows = new LinkedHashMap<>();
		for (String line : lines.subList(start + 1, lines.size())) {
			if (line.startsWith("## ")) {
				break;
			}
			if (line.startsWith("| `")) {
				String[] cells = line.split("\\|", -1);
				assertThat(cells).as("cells of README row %s", line).hasSize(5);
				Row row = new Row(code(cells[1]), code(cells[2]), cells[3].strip().replace("`", ""));
				assertThat(rows.put(row.property(), row)).as("another README row of %s", row.property()).isNull();
			}
		}
		assertThat(rows).as("rows of the README's property table").isNotEmpty();
		return rows;
	}

	private static @Nullable String code(String cell) {
		String text = cell.strip();
		if (text.isEmpty()) {
			return null;
		}
		assertThat(text).as("a README cell in backticks").startsWith("`").endsWith("`");
		return text.substring(1, text.length() - 1);
	}

	/**
	 * A value in a form that compares equal however it is written: {@code 1s} and
	 * {@code 1000ms}, {@code 2} and {@code 2.0}, {@code read_only} and {@code read-only}.
	 */
	private static @Nullable Object normalized(String type, @Nullable String value) {
		if (value == null) {
			return null;
		}
		if (type.equals("java.time.Duration")) {
			return DurationStyle.detectAndParse(value);
		}
		if (type.equals("org.springframework.util.unit.DataSize")) {
			return DataSize.parse(value);
		}
		if (type.equals("java.lang.Boolean")) {
			return Boolean.valueOf(value);
		}
		if (List.of("java.lang.Integer", "java.lang.Long", "java.lang.Double").contains(type)) {
			return new BigDecimal(value).stripTrailingZeros();
		}
		if (type.startsWith("java.util.List<") || type.startsWith("java.util.Set<")) {
			return Stream.of(value.split(",")).map(String::strip).toList();
		}
		if (type.startsWith("java.")) {
			return value;
		}
		// An enum, which binds case-insensitively and with '-' or '_'.
		return value.toLowerCase(Locale.ROOT).replace('_', '-');
	}

	private static List<URL> resources(String name) {
		try {
			return Collections
				.list(ConfigurationPropertiesDocumentationTests.class.getClassLoader().getResources(name));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static JsonNode readTree(URL url) {
		try (InputStream input = url.openStream()) {
			return JsonMapper.shared().readTree(input);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read " + url, ex);
		}
	}

	private static List<String> readLines(Path path) {
		assertThat(path).as("the README, found from the module directory").isRegularFile();
		try {
			return Files.readAllLines(path);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private record Property(String name, String type, @Nullable String defaultValue, String description) {

	}

	private record Row(String property, @Nullable String defaultValue, String meaning) {

	}

}
