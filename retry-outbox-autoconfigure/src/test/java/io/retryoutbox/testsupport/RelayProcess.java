package io.retryoutbox.testsupport;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;

/**
 * An application with the starter, run as a separate JVM so that a test can kill it
 * without a clean stop.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class RelayProcess {

	public static void main(String[] args) {
		SpringApplication.run(RelayProcess.class, args);
	}

	/**
	 * Starts the application in a new JVM with the test's classpath.
	 * @param properties application properties, as {@code name=value}
	 * @return the process
	 * @throws IOException if the JVM cannot be started
	 */
	public static Process start(String... properties) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(RelayProcess.class.getName());
		for (String property : properties) {
			command.add("--" + property);
		}
		return new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
	}

}
