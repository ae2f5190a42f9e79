package io.retryoutbox.support;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Paths of plain characters skip the URI parse; every other path is still parsed, and
 * what must be refused is refused either way.
 */
class HttpRequestRulesTests {

	@ParameterizedTest
	@ValueSource(strings = { "/msg", "orders", "/api/v1/orders/42", "/a-b_c.d~e", "/orders?page=2&size=10",
			"/orders?a=b?c", "/a%20b/c", "/caf%C3%A9", "/a:b/c", "/a@b", "/a;v=1/b", "/a/b%2Fc" })
	void acceptsPathsUnderTheBaseUrl(String path) {
		assertThatNoException().isThrownBy(() -> HttpRequestRules.checkPath(path));
	}

	@ParameterizedTest
	@ValueSource(strings = { "//evil.example/x", "http://evil.example/x", "mailto:x@y", "/a/../b", "/a/./b", "..",
			"/a/%2e%2e/b", "/a/%2E/b" })
	void refusesPathsThatLeaveTheBaseUrl(String path) {
		assertThatIllegalArgumentException().isThrownBy(() -> HttpRequestRules.checkPath(path))
			.withMessageContaining("Path '" + path + "'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "/a b", "/a|b", "/a\"b", "/a<b>", "/a{b}", "/a%zz", "/a\\b", "/a^b", "/a`b" })
	void refusesPathsThatAreNoValidUriPath(String path) {
		assertThatIllegalArgumentException().isThrownBy(() -> HttpRequestRules.checkPath(path))
			.withMessageContaining("is not a valid URI path");
	}

}
