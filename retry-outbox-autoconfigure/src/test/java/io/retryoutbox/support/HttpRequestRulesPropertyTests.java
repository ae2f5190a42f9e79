package io.retryoutbox.support;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The dot-segment rule of {@link HttpRequestRules} against its definition: a segment of
 * the path part, decoded, is {@code .} or {@code ..}.
 */
class HttpRequestRulesPropertyTests {

	@Property(tries = 5000)
	void aPathIsRefusedForADotSegmentExactlyWhenADecodedSegmentOfItsPathPartIsOneOrTwoDots(
			@ForAll("paths") String path) {
		Throwable refused = catchThrowable(() -> HttpRequestRules.checkPath(path));
		boolean refusedForDots = refused != null && refused.getMessage().contains("must not contain a dot segment");
		assertThat(refusedForDots).as("refused %s for a dot segment", path).isEqualTo(hasDotSegment(path));
	}

	@Provide
	Arbitrary<String> paths() {
		Arbitrary<String> pieces = Arbitraries.of(".", "..", "%2e", "%2E", "%2", "%", "2", "e", "E", "/", "a", "?",
				"%2F", "~");
		return pieces.list().ofMaxSize(12).map((list) -> "/a" + String.join("", list));
	}

	private static boolean hasDotSegment(String path) {
		int query = path.indexOf('?');
		String pathPart = (query >= 0) ? path.substring(0, query) : path;
		for (String segment : pathPart.split("/", -1)) {
			String decoded = segment.replace("%2e", ".").replace("%2E", ".");
			if (decoded.equals(".") || decoded.equals("..")) {
				return true;
			}
		}
		return false;
	}

}
