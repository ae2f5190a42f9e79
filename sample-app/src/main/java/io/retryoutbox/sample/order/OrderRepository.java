package io.retryoutbox.sample.order;

import java.util.Optional;

import org.springframework.data.relational.core.sql.LockMode;
import org.springframework.data.relational.repository.Lock;
import org.springframework.data.repository.ListCrudRepository;

/**
 * Stores {@link Order orders}.
 */
public interface OrderRepository extends ListCrudRepository<Order, Long> {

	/**
	 * Reads an order and locks its row until the transaction ends, so that concurrent
	 * changes of one order happen one after the other.
	 * @param id the order id
	 * @return the order, if any
	 */
	@Lock(LockMode.PESSIMISTIC_WRITE)
	Optional<Order> findLockedById(long id);

}
