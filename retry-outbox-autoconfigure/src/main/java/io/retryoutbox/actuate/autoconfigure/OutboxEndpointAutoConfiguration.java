package io.retryoutbox.actuate.autoconfigure;

import io.retryoutbox.actuate.OutboxEndpoint;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.relay.OutboxRelay;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} for the {@link OutboxEndpoint outbox endpoint}.
 */
@AutoConfiguration(after = RetryOutboxAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean({ OutboxReadModel.class, OutboxRepair.class })
@EnableConfigurationProperties(OutboxEndpointProperties.class)
public final class OutboxEndpointAutoConfiguration {

	// On the method, not the class: its condition class is only there with actuator,
	// which the class-level condition checks first.
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(OutboxEndpoint.class)
	OutboxEndpoint outboxEndpoint(OutboxReadModel readModel, OutboxRepair repair, OutboxEndpointProperties properties,
			ObjectProvider<OutboxRelay> relay) {
		return new OutboxEndpoint(readModel, repair, relay.getIfAvailable(), properties.getShowValues(),
				properties.getRoles());
	}

}
