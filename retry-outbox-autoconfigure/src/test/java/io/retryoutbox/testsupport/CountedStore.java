package io.retryoutbox.testsupport;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.relay.OutboxStore;

/**
 * An outbox store that counts the calls of one of its methods and passes every call on.
 */
public final class CountedStore {

	private CountedStore() {
	}

	/**
	 * Wraps a store.
	 * @param store the store that does the work
	 * @param method the name of the method to count
	 * @param calls where the calls are counted
	 * @return the counting store
	 */
	public static OutboxStore counting(OutboxStore store, String method, AtomicInteger calls) {
		return (OutboxStore) Proxy.newProxyInstance(OutboxStore.class.getClassLoader(),
				new Class<?>[] { OutboxStore.class }, (proxy, called, args) -> {
					if (called.getName().equals(method)) {
						calls.incrementAndGet();
					}
					try {
						return called.invoke(store, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

}
