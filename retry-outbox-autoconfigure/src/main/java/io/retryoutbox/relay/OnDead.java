package io.retryoutbox.relay;

/**
 * What a dead message does to the later messages of its ordering key.
 */
public enum OnDead {

	/**
	 * The next message of the key proceeds; the dead one waits in the dead-letter set.
	 */
	SKIP,

	/**
	 * The key is parked: its later messages wait until the dead one is replayed or
	 * discarded.
	 */
	BLOCK

}
