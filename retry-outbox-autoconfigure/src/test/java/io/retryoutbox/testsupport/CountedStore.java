package io.retryoutbox.testsupport;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import io.retryoutbox.relay.OutboxStore;

/**
 * An outbox store that counts, or runs a task before, the calls of one of its methods and
 * passes every call on.
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
		return calling(store, method, (args) -> calls.incrementAndGet());
	}

	/**
	 * Wraps a store.
	 * @param store the store that does the work
	 * @param method the name of the method before whose calls {@code before} runs
	 * @param before what runs, on the calling thread, before each call of {@code method},
	 * given its arguments
	 * @return the wrapping store
	 */
	public static OutboxStore calling(OutboxStore store, String method, Consumer<Object[]> before) {
		return (OutboxStore) Proxy.newProxyInstance(OutboxStore.class.getClassLoader(),
				new Class<?>[] { OutboxStore.class }, (proxy, called, args) -> {
					if (called.getName().equals(method)) {
						before.accept(args);
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
