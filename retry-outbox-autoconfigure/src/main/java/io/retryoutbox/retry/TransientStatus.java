package io.retryoutbox.retry;

import java.util.Set;

/**
 * The one rule of which HTTP statuses are transient by themselves: 408, 425, 429, 500,
 * 502, 503 and 504 say that the same request may succeed later. Every other status is
 * final, among them 501 and 505, which say the request will never work, and the rarer 5xx
 * (507, 508, 511, ...), which mean a fault to repair rather than to wait out.
 * <p>
 * The {@link DefaultRetryPolicy} retries these statuses, and a relay's circuit counts
 * them as failures, so that the two never disagree on what a status means. A 409 is not
 * transient by its status alone: the policy reads the error code in its body.
 */
public final class TransientStatus {

	private static final Set<Integer> STATUSES = Set.of(408, 425, 429, 500, 502, 503, 504);

	private TransientStatus() {
	}

	/**
	 * Whether a response with the given status may succeed if the request is sent again
	 * unchanged.
	 * @param status the HTTP status code
	 * @return whether it is transient
	 */
	public static boolean isTransient(int status) {
		return STATUSES.contains(status);
	}

}
