package io.retryoutbox.sample.simulator;

import java.time.Clock;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The payments simulator and its configuration.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SimulatorProperties.class)
class SimulatorConfiguration {

	@Bean
	PaymentsSimulator paymentsSimulator(SimulatorProperties properties) {
		return new PaymentsSimulator(new FaultDice(properties.getSeed(), properties.getFaults()), Clock.systemUTC());
	}

}
