#!/usr/bin/env sh
# Checks the alerting rules and runs their unit tests with promtool (Debian: apt-get install prometheus).
# When MonitoringHttpTests has run, it also checks the retry_outbox_* part of the scrape it wrote
# (help text, naming) and parses every query of the dashboard. With --strict (CI), their absence fails.
set -eu
cd "$(dirname "$0")"
output=../retry-outbox-autoconfigure/target/monitoring

promtool check rules retry-outbox-alerts.yml
promtool test rules retry-outbox-alerts.test.yml

if [ -f "$output/scrape.txt" ] && [ -f "$output/dashboard-expressions.yml" ]; then
	echo "Checking the retry_outbox_* metrics of $output/scrape.txt"
	grep -E '^(# (HELP|TYPE) )?retry_outbox_' "$output/scrape.txt" | promtool check metrics
	echo "Checking the dashboard's queries"
	promtool check rules "$output/dashboard-expressions.yml"
elif [ "${1:-}" = "--strict" ]; then
	echo "No scrape in $output: MonitoringHttpTests did not run" >&2
	exit 1
else
	echo "No scrape in $output: run MonitoringHttpTests to check the metrics and the dashboard's queries too"
fi
