package io.retryoutbox.support;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * Reading response bodies that the relay and direct calls classify.
 */
public final class DataBuffers {

	private DataBuffers() {
	}

	/**
	 * Copies a buffer's readable bytes and releases it.
	 * @param buffer the buffer, released even if copying fails
	 * @return its bytes
	 */
	public static byte[] toBytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

}
