package io.retryoutbox.actuate;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What {@code monitoring/} gives users, held against what a running application
 * publishes: a servlet application with the whole auto-configuration delivers a message,
 * retries one, dead-letters one and has a destination paused by a 503 with
 * {@code Retry-After}, on a real PostgreSQL and against a real HTTP server; then its
 * {@code /actuator/prometheus} scrape must carry help text for every
 * {@code retry_outbox_*} family and every metric name that the dashboard, the alerting
 * rules and their unit tests use, and the README's metric list must name every
 * retry-outbox meter and nothing else. The scrape, and the dashboard's expressions as
 * recording rules, are written to {@code target/monitoring/} for
 * {@code monitoring/check.sh} to run {@code promtool} on.
 */
class MonitoringHttpTests {

	private static final Pattern METRIC_NAME = Pattern.compile("\\bretry_outbox_[a-zA-Z0-9_]*[a-zA-Z0-9]");

	private static final Pattern METER_NAME = Pattern.compile("\\bretry\\.outbox\\.[a-z0-9.]*[a-z0-9]");

	private static final Path OUTPUT = Path.of("target", "monitoring");

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private ServletApplication application;

	@AfterEach
	void stop() {
		if (this.application != null) {
			this.application.close();
		}
	}

	@Test
	void publishesWithHelpTextEveryMetricTheDashboardAndTheAlertsUse() throws Exception {
		this.destination.dispatcher()
			.answer("/api/bad", new MockResponse.Builder().code(400).build())
			.answer("/ship/busy", new MockResponse.Builder().code(503).addHeader("Retry-After", "600").build());
		this.application = ServletApplication.start(OutboxActuatorHttpTests.Application.class, this.destination,
				Map.of("management.endpoints.web.exposure.include", "health,prometheus",
						"retry-outbox.metrics.gauge-interval", "100ms", "retry-outbox.destinations.shipping.base-url",
						this.destination.server().url("/ship").toString()));
		ConfigurableApplicationContext context = this.application.context();
		awaitStatus(context, send(context, "payments", "/ok"), "DELIVERED");
		awaitStatus(context, send(context, "payments", "/bad"), "DEAD");
		UUID busy = send(context, "shipping", "/busy");
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, busy)).containsEntry("last_status_code", 503));
		AtomicReference<String> last = new AtomicReference<>();
		// The gauges are read every gauge-interval, and an attempt's timer is recorded
		// when its observation stops, which may be after its outcome was written.
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			last.set(this.application.get("/actuator/prometheus").body());
			assertThat(last.get()).contains("retry_outbox_dead 1.0")
				.contains("retry_outbox_pending 1.0")
				.contains("retry_outbox_destination_dead{destination=\"payments\"} 1.0")
				.contains("retry_outbox_destination_pending{destination=\"shipping\"} 1.0")
				.contains("retry_outbox_destination_pending{destination=\"payments\"} 0.0")
				.contains("retry_outbox_relay_running 1.0")
				.contains("retry_outbox_flow_state{destination=\"shipping\",state=\"PAUSED\"} 1.0")
				.containsPattern("retry_outbox_attempts_seconds_count\\{[^}]*outcome=\"DELIVERED\"[^}]*} 1")
				.containsPattern("retry_outbox_attempts_seconds_count\\{[^}]*outcome=\"RETRY\"[^}]*} 1")
				.containsPattern("retry_outbox_attempts_seconds_count\\{[^}]*outcome=\"DEAD\"[^}]*} 1")
				.contains("retry_outbox_delivery_latency_seconds_count{destination=\"payments\"} 1");
		});
		String scrape = last.get();
		Files.createDirectories(OUTPUT);
		Files.writeString(OUTPUT.resolve("scrape.txt"), scrape);
		Scrape families = Scrape.parse(scrape);

		assertThat(families.help()).as("retry_outbox_* families in the scrape").isNotEmpty();
		assertThat(families.help()).as("families without help text")
			.allSatisfy((family, help) -> assertThat(help).as("help text of %s", family).isNotBlank());
		assertThat(families.samples()).as("samples outside a family with help text")
			.allSatisfy((sample) -> assertThat(families.familyOf(sample)).as(sample).isNotNull());

		Path monitoring = monitoringDirectory();
		JsonNode dashboard = JsonMapper.shared().readTree(monitoring.resolve("retry-outbox-dashboard.json").toFile());
		assertImportable(dashboard);
		Map<String, Set<String>> used = new TreeMap<>();
		used.put("retry-outbox-dashboard.json", metricNames(strings(dashboard)));
		for (String rules : List.of("retry-outbox-alerts.yml", "retry-outbox-alerts.test.yml")) {
			used.put(rules, metricNames(strings(yaml(monitoring.resolve(rules)))));
		}
		assertThat(used).allSatisfy((file,
				names) -> assertThat(names).as("metric names of %s", file).isNotEmpty().isSubsetOf(families.samples()));
		assertThat(used.get("retry-outbox-alerts.yml")).as("the alerts")
			.contains("retry_outbox_destination_dead", "retry_outbox_lag_seconds", "retry_outbox_relay_running",
					"retry_outbox_flow_state");
		writeDashboardExpressions(dashboard);

		String readme = readme(monitoring.getParent());
		assertThat(metricNames(List.of(readme))).as("Prometheus names in the README's Metrics and Monitoring sections")
			.isSubsetOf(families.all());
		Set<String> meters = context.getBean(MeterRegistry.class)
			.getMeters()
			.stream()
			.map(Meter::getId)
			.map(Meter.Id::getName)
			.filter((name) -> name.startsWith("retry.outbox."))
			.collect(Collectors.toCollection(TreeSet::new));
		Set<String> mentioned = names(METER_NAME, List.of(readme));
		assertThat(mentioned).as("meters in the README's Metrics and Monitoring sections").isEqualTo(meters);
	}

	private static UUID send(ConfigurableApplicationContext context, String destination, String path) {
		return OutboxContexts.transactions(context)
			.execute((tx) -> context.getBean(Outbox.class).send(OutboxRequest.post(destination, path).build()));
	}

	private static void awaitStatus(ConfigurableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", status));
	}

	private static Path monitoringDirectory() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("monitoring/retry-outbox-alerts.yml"))) {
				return dir.resolve("monitoring");
			}
		}
		throw new IllegalStateException("No monitoring/retry-outbox-alerts.yml in " + Path.of("").toAbsolutePath()
				+ " or a directory above it");
	}

	private static Object yaml(Path file) throws IOException {
		try (InputStream in = Files.newInputStream(file)) {
			return new Yaml().load(in);
		}
	}

	/**
	 * Every string in a parsed JSON or YAML document: expressions, template queries,
	 * series of the unit tests, annotations.
	 */
	private static List<String> strings(Object node) {
		List<String> strings = new ArrayList<>();
		collect(node, strings);
		return strings;
	}

	private static void collect(Object node, List<String> strings) {
		if (node instanceof JsonNode json) {
			if (json.isString()) {
				strings.add(json.asString());
			}
			json.values().forEach((child) -> collect(child, strings));
		}
		else if (node instanceof Map<?, ?> map) {
			map.values().forEach((child) -> collect(child, strings));
		}
		else if (node instanceof List<?> list) {
			list.forEach((child) -> collect(child, strings));
		}
		else if (node instanceof String string) {
			strings.add(string);
		}
	}

	private static Set<String> metricNames(List<String> strings) {
		return names(METRIC_NAME, strings);
	}

	private static Set<String> names(Pattern pattern, List<String> strings) {
		Set<String> names = new TreeSet<>();
		for (String string : strings) {
			Matcher matcher = pattern.matcher(string);
			while (matcher.find()) {
				names.add(matcher.group());
			}
		}
		return names;
	}

	/**
	 * The README's Metrics and Monitoring sections, where it lists the meters.
	 */
	private static String readme(Path root) throws IOException {
		String readme = Files.readString(root.resolve("README.md"));
		return section(readme, "### Metrics") + section(readme, "### Monitoring");
	}

	private static String section(String readme, String heading) {
		int start = readme.indexOf("\n" + heading + "\n");
		assertThat(start).as("README section %s", heading).isNotNegative();
		int end = readme.indexOf("\n### ", start + heading.length() + 1);
		return readme.substring(start, (end != -1) ? end : readme.length());
	}

	/**
	 * Panels with ids of their own, whose queries go to the data source the user picks.
	 */
	private static void assertImportable(JsonNode dashboard) {
		assertThat(dashboard.at("/templating/list/0/type").asString()).isEqualTo("datasource");
		List<Integer> ids = new ArrayList<>();
		dashboard.at("/panels").forEach((panel) -> {
			ids.add(panel.at("/id").asInt());
			panel.at("/targets")
				.forEach((target) -> assertThat(target.at("/datasource/uid").asString())
					.as("data source of panel %s", panel.at("/title").asString())
					.isEqualTo("${datasource}"));
		});
		assertThat(ids).as("panel ids").doesNotHaveDuplicates();
	}

	/**
	 * The dashboard's queries as recording rules, with Grafana's variables replaced, so
	 * that {@code promtool check rules} parses them.
	 */
	private static void writeDashboardExpressions(JsonNode dashboard) throws IOException {
		List<Map<String, String>> rules = new ArrayList<>();
		dashboard.at("/panels").forEach((panel) -> panel.at("/targets").forEach((target) -> {
			String expr = target.at("/expr")
				.asString()
				.replace("$__rate_interval", "5m")
				.replace("$job", ".*")
				.replace("$destination", ".*");
			Map<String, String> rule = new LinkedHashMap<>();
			rule.put("record", "dashboard:panel_" + panel.at("/id").asInt() + ":" + target.at("/refId").asString());
			rule.put("expr", expr);
			rules.add(rule);
		}));
		assertThat(rules).as("dashboard queries").hasSizeGreaterThan(20);
		DumperOptions options = new DumperOptions();
		options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
		Map<String, Object> group = Map.of("name", "retry-outbox-dashboard", "rules", rules);
		Files.writeString(OUTPUT.resolve("dashboard-expressions.yml"),
				new Yaml(options).dump(Map.of("groups", List.of(group))));
	}

	/**
	 * The {@code retry_outbox_*} part of a scrape in Prometheus's text format.
	 *
	 * @param help each family's help text, empty where it has none
	 * @param samples the names of the samples
	 */
	private record Scrape(Map<String, String> help, Set<String> samples) {

		private static final List<String> SUFFIXES = List.of("", "_count", "_sum", "_bucket", "_total", "_created");

		static Scrape parse(String scrape) {
			Map<String, String> help = new TreeMap<>();
			Set<String> samples = new TreeSet<>();
			for (String line : scrape.lines().toList()) {
				if (line.startsWith("# HELP retry_outbox_")) {
					String[] parts = line.split(" ", 4);
					help.put(parts[2], (parts.length > 3) ? parts[3] : "");
				}
				else if (line.startsWith("# TYPE retry_outbox_")) {
					help.putIfAbsent(line.split(" ")[2], "");
				}
				else if (line.startsWith("retry_outbox_")) {
					samples.add(line.split("[{ ]", 2)[0]);
				}
			}
			return new Scrape(help, samples);
		}

		String familyOf(String sample) {
			return SUFFIXES.stream()
				.filter((suffix) -> sample.endsWith(suffix))
				.map((suffix) -> sample.substring(0, sample.length() - suffix.length()))
				.filter(this.help::containsKey)
				.findFirst()
				.orElse(null);
		}

		Set<String> all() {
			return Stream.concat(this.help.keySet().stream(), this.samples.stream())
				.collect(Collectors.toCollection(TreeSet::new));
		}

	}

}
