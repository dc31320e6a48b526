// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testrun

import (
	"regexp"
	"strconv"
	"strings"
)

// Counts reads how many tests a runner ran, passed and failed from the
// command's output (stdout and stderr as the agent saw them). ok is false
// when the output says nothing countable (go test without -v prints only
// packages; a build that failed before any test ran). Always
// run = passed + failed: skipped, pending and todo tests are not counted as
// run, and errors (pytest, unittest, maven) count as failures.
//
// For runners that run a script whose runner is unknown (npm, yarn, pnpm,
// make), every known format is tried, JavaScript ones first.
func Counts(runner, output string) (run, passed, failed int, ok bool) {
	output = clean(output)
	var parsers []parser
	switch runner {
	case NPM, Yarn, PNPM, Make:
		parsers = allParsers
	default:
		p, known := parsersByRunner[runner]
		if !known {
			return 0, 0, 0, false
		}
		parsers = []parser{p}
	}
	for _, p := range parsers {
		if c, found := p(output); found {
			// Totals minus skips can go negative on output that is cut or
			// odd; a count is never below zero.
			c.passed, c.failed = max(c.passed, 0), max(c.failed, 0)
			return c.passed + c.failed, c.passed, c.failed, true
		}
	}
	return 0, 0, 0, false
}

type counts struct{ passed, failed int }

// parser reads one output format.
type parser func(output string) (counts, bool)

var parsersByRunner = map[string]parser{
	Go:       goCounts,
	Pytest:   pytestCounts,
	Unittest: unittestCounts,
	Cargo:    cargoCounts,
	Jest:     jestCounts,
	Vitest:   vitestCounts,
	Mocha:    mochaCounts,
	Node:     nodeCounts,
	Bun:      bunCounts,
	Deno:     denoCounts,
	RSpec:    rspecCounts,
	Maven:    mavenCounts,
	Gradle:   gradleCounts,
	Dotnet:   dotnetCounts,
	Mix:      mixCounts,
	PHPUnit:  phpunitCounts,
}

// allParsers is the order tried for script runners: the JavaScript formats
// first (npm, yarn and pnpm scripts mostly run one of them), then the rest.
var allParsers = []parser{
	jestCounts, vitestCounts, mochaCounts, nodeCounts, bunCounts, denoCounts,
	goCounts, pytestCounts, unittestCounts, cargoCounts, rspecCounts, mavenCounts,
	dotnetCounts, mixCounts, phpunitCounts,
}

var ansiPattern = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// clean removes color codes and carriage returns, which some runners
// write even when their output is not a terminal.
func clean(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiPattern.ReplaceAllString(s, "")
	}
	return strings.ReplaceAll(s, "\r", "")
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// sumMatches adds up group 1 of every match of re.
func sumMatches(re *regexp.Regexp, s string) (int, bool) {
	total, found := 0, false
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		total += atoi(m[1])
		found = true
	}
	return total, found
}

// wordCounts reads "<n> <word>" pairs (3 passed, 1 failed) from a summary.
var wordCountPattern = regexp.MustCompile(`(\d+) ([a-z]+)`)

func wordCounts(line string) map[string]int {
	out := map[string]int{}
	for _, m := range wordCountPattern.FindAllStringSubmatch(strings.ToLower(line), -1) {
		out[m[2]] += atoi(m[1])
	}
	return out
}

// lastLine returns the last line matching re.
func lastLine(re *regexp.Regexp, s string) (string, bool) {
	all := re.FindAllString(s, -1)
	if len(all) == 0 {
		return "", false
	}
	return all[len(all)-1], true
}

var (
	// go test -v: one line per test and subtest when it ends.
	goVerboseRun  = regexp.MustCompile(`(?m)^\s*=== RUN `)
	goVerbosePass = regexp.MustCompile(`(?m)^\s*--- PASS: `)
	goVerboseFail = regexp.MustCompile(`(?m)^\s*--- FAIL: `)
	// go test -json: one object per action.
	goJSONPass = regexp.MustCompile(`(?m)^\{.*"Action":"pass".*"Test":"`)
	goJSONFail = regexp.MustCompile(`(?m)^\{.*"Action":"fail".*"Test":"`)
	// gotestsum: "DONE 12 tests, 1 skipped, 2 failures in 0.512s".
	gotestsumDone = regexp.MustCompile(`(?m)^DONE (\d+) tests?(.*) in [\d.]+s`)
)

// goCounts reads go test -v (per-test PASS/FAIL lines; subtests count as
// tests), go test -json and gotestsum summaries. Plain go test prints only
// packages, which are not tests: no count.
func goCounts(s string) (counts, bool) {
	if m := gotestsumDone.FindAllStringSubmatch(s, -1); len(m) > 0 {
		last := m[len(m)-1]
		w := wordCounts(last[2])
		failed := w["failure"] + w["failures"] + w["error"] + w["errors"]
		skipped := w["skipped"]
		return counts{passed: atoi(last[1]) - failed - skipped, failed: failed}, true
	}
	if strings.Contains(s, `"Action":`) {
		p, f := len(goJSONPass.FindAllString(s, -1)), len(goJSONFail.FindAllString(s, -1))
		if p+f > 0 {
			return counts{passed: p, failed: f}, true
		}
	}
	if !goVerboseRun.MatchString(s) {
		return counts{}, false
	}
	return counts{passed: len(goVerbosePass.FindAllString(s, -1)), failed: len(goVerboseFail.FindAllString(s, -1))}, true
}

// pytestSummary is pytest's last line: "==== 3 passed, 1 failed in 0.12s ====",
// "5 passed in 0.01s" with -q, "no tests ran in 0.01s".
var pytestSummary = regexp.MustCompile(`(?m)^=*\s*(?:no tests ran|(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun|subtests passed|subtests failed)(?:, )?)+)\s+in [\d.]+s.*$`)

func pytestCounts(s string) (counts, bool) {
	line, ok := lastLine(pytestSummary, s)
	if !ok {
		return counts{}, false
	}
	w := wordCounts(strings.SplitN(line, " in ", 2)[0])
	return counts{passed: w["passed"], failed: w["failed"] + w["error"] + w["errors"]}, true
}

var (
	unittestRan    = regexp.MustCompile(`(?m)^Ran (\d+) tests? in [\d.]+s`)
	unittestResult = regexp.MustCompile(`(?m)^(OK|FAILED)(?: \((.*)\))?\s*$`)
)

// unittestCounts reads "Ran 5 tests in 0.01s" and the "OK" /
// "FAILED (failures=1, errors=1, skipped=2)" line after it.
func unittestCounts(s string) (counts, bool) {
	ran := unittestRan.FindAllStringSubmatchIndex(s, -1)
	if len(ran) == 0 {
		return counts{}, false
	}
	last := ran[len(ran)-1]
	total := atoi(s[last[2]:last[3]])
	details := map[string]int{}
	if m := unittestResult.FindStringSubmatch(s[last[1]:]); m != nil {
		for kv := range strings.SplitSeq(m[2], ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			details[k] = atoi(v)
		}
	}
	failed := details["failures"] + details["errors"] + details["unexpected successes"]
	run := total - details["skipped"] - details["expected failures"]
	return counts{passed: run - failed, failed: failed}, true
}

var (
	// One per test binary (unit tests, each integration test, doc tests).
	cargoResult = regexp.MustCompile(`(?m)^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;`)
	// cargo nextest: "Summary [ 0.010s] 5 tests run: 4 passed, 1 failed, 0 skipped".
	nextestSummary = regexp.MustCompile(`(?m)^\s*Summary \[.*\] (\d+) tests? run: (.*)$`)
)

func cargoCounts(s string) (counts, bool) {
	if line, ok := lastLine(nextestSummary, s); ok {
		w := wordCounts(nextestSummary.FindStringSubmatch(line)[2])
		return counts{passed: w["passed"], failed: w["failed"] + w["timed"]}, true
	}
	var c counts
	found := false
	for _, m := range cargoResult.FindAllStringSubmatch(s, -1) {
		c.passed += atoi(m[1])
		c.failed += atoi(m[2])
		found = true
	}
	return c, found
}

// jestSummary: "Tests:       1 failed, 4 passed, 5 total" (also skipped, todo).
var jestSummary = regexp.MustCompile(`(?m)^Tests:\s+(.*\d+ total)\s*$`)

func jestCounts(s string) (counts, bool) {
	line, ok := lastLine(jestSummary, s)
	if !ok {
		return counts{}, false
	}
	w := wordCounts(line)
	return counts{passed: w["passed"], failed: w["failed"]}, true
}

// vitestSummary: "      Tests  1 failed | 3 passed | 1 skipped (5)" — not the
// "Test Files" line above it.
var vitestSummary = regexp.MustCompile(`(?m)^\s*Tests\s+(\d+ [a-z]+(?: \| \d+ [a-z]+)*) \(\d+\)\s*$`)

func vitestCounts(s string) (counts, bool) {
	line, ok := lastLine(vitestSummary, s)
	if !ok {
		return counts{}, false
	}
	w := wordCounts(line)
	return counts{passed: w["passed"], failed: w["failed"]}, true
}

var (
	mochaPassing = regexp.MustCompile(`(?m)^\s*(\d+) passing \(`)
	mochaFailing = regexp.MustCompile(`(?m)^\s*(\d+) failing\s*$`)
)

// mochaCounts reads the spec reporter's "  4 passing (12ms)" / "  1 failing".
func mochaCounts(s string) (counts, bool) {
	p, ok := sumMatches(mochaPassing, s)
	f, fok := sumMatches(mochaFailing, s)
	if !ok && !fok {
		return counts{}, false
	}
	return counts{passed: p, failed: f}, true
}

var (
	// node --test, TAP ("# pass 4") and spec ("ℹ pass 4") reporters.
	nodePass = regexp.MustCompile(`(?m)^[#ℹ] pass (\d+)\s*$`)
	nodeFail = regexp.MustCompile(`(?m)^[#ℹ] fail (\d+)\s*$`)
)

func nodeCounts(s string) (counts, bool) {
	p, ok := sumMatches(nodePass, s)
	f, fok := sumMatches(nodeFail, s)
	if !ok || !fok {
		return counts{}, false
	}
	return counts{passed: p, failed: f}, true
}

var (
	// bun test: " 5 pass", " 1 fail", then "Ran 6 tests across 2 files."
	bunPass = regexp.MustCompile(`(?m)^\s*(\d+) pass\s*$`)
	bunFail = regexp.MustCompile(`(?m)^\s*(\d+) fail\s*$`)
	bunRan  = regexp.MustCompile(`(?m)^Ran \d+ tests? across \d+ files?\.`)
)

func bunCounts(s string) (counts, bool) {
	if !bunRan.MatchString(s) {
		return counts{}, false
	}
	p, _ := sumMatches(bunPass, s)
	f, _ := sumMatches(bunFail, s)
	return counts{passed: p, failed: f}, true
}

// denoSummary: "ok | 5 passed | 0 failed (20ms)", "FAILED | 4 passed (2 steps) | 1 failed (30ms)".
var denoSummary = regexp.MustCompile(`(?m)^(?:ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed`)

func denoCounts(s string) (counts, bool) {
	m := denoSummary.FindAllStringSubmatch(s, -1)
	if len(m) == 0 {
		return counts{}, false
	}
	last := m[len(m)-1]
	return counts{passed: atoi(last[1]), failed: atoi(last[2])}, true
}

// rspecSummary: "5 examples, 1 failure, 2 pending".
var rspecSummary = regexp.MustCompile(`(?m)^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?`)

func rspecCounts(s string) (counts, bool) {
	m := rspecSummary.FindAllStringSubmatch(s, -1)
	if len(m) == 0 {
		return counts{}, false
	}
	last := m[len(m)-1]
	failed := atoi(last[2])
	return counts{passed: atoi(last[1]) - failed - atoi(last[3]), failed: failed}, true
}

// mavenResults is surefire's per-module summary after "Results:"; the
// per-class lines end with ", Time elapsed: … - in <class>" and are left out.
var mavenResults = regexp.MustCompile(`(?m)^(?:\[[A-Z]+\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$`)

func mavenCounts(s string) (counts, bool) {
	var c counts
	found := false
	for _, m := range mavenResults.FindAllStringSubmatch(s, -1) {
		failed := atoi(m[2]) + atoi(m[3])
		c.failed += failed
		c.passed += atoi(m[1]) - failed - atoi(m[4])
		found = true
	}
	return c, found
}

// gradleCounts: Gradle prints no test counts unless a test fails
// ("5 tests completed, 1 failed, 1 skipped"); a green run says nothing.
var gradleCompleted = regexp.MustCompile(`(?m)^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?`)

func gradleCounts(s string) (counts, bool) {
	var c counts
	found := false
	for _, m := range gradleCompleted.FindAllStringSubmatch(s, -1) {
		failed := atoi(m[2])
		c.failed += failed
		c.passed += atoi(m[1]) - failed - atoi(m[3])
		found = true
	}
	return c, found
}

var (
	// dotnet test (VSTest): "Passed!  - Failed:     0, Passed:     5, Skipped:     0, Total:     5, Duration: …", one per test project.
	dotnetVSTest = regexp.MustCompile(`(?m)^(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+),`)
	// .NET 9+ summary: "Test summary: total: 5, failed: 1, succeeded: 4, skipped: 0, duration: 1.2s".
	dotnetSummary = regexp.MustCompile(`(?m)^Test summary: total: \d+, failed: (\d+), succeeded: (\d+),`)
)

func dotnetCounts(s string) (counts, bool) {
	if m := dotnetSummary.FindAllStringSubmatch(s, -1); len(m) > 0 {
		last := m[len(m)-1]
		return counts{passed: atoi(last[2]), failed: atoi(last[1])}, true
	}
	var c counts
	found := false
	for _, m := range dotnetVSTest.FindAllStringSubmatch(s, -1) {
		c.failed += atoi(m[1])
		c.passed += atoi(m[2])
		found = true
	}
	return c, found
}

// mixSummary: "5 tests, 1 failure" (with doctests: "1 doctest, 5 tests, 0 failures";
// "2 excluded", "1 skipped" may follow).
var mixSummary = regexp.MustCompile(`(?m)^(?:(\d+) doctests?, )?(\d+) tests?, (\d+) failures?(.*)$`)

func mixCounts(s string) (counts, bool) {
	m := mixSummary.FindAllStringSubmatch(s, -1)
	if len(m) == 0 {
		return counts{}, false
	}
	last := m[len(m)-1]
	failed := atoi(last[3])
	w := wordCounts(last[4])
	return counts{passed: atoi(last[1]) + atoi(last[2]) - failed - w["skipped"] - w["excluded"] - w["invalid"], failed: failed}, true
}

var (
	// PHPUnit green: "OK (5 tests, 10 assertions)"; otherwise
	// "Tests: 5, Assertions: 9, Failures: 1, Errors: 1, Skipped: 1."
	phpunitOK      = regexp.MustCompile(`(?m)^OK \((\d+) tests?, \d+ assertions?\)`)
	phpunitSummary = regexp.MustCompile(`(?m)^Tests: (\d+), Assertions: \d+(.*)\.\s*$`)
	// Pest: "Tests:    1 failed, 4 passed (9 assertions)".
	pestSummary = regexp.MustCompile(`(?m)^\s*Tests:\s+(.*)\(\d+ assertions?\)`)
)

func phpunitCounts(s string) (counts, bool) {
	if m := phpunitOK.FindAllStringSubmatch(s, -1); len(m) > 0 {
		return counts{passed: atoi(m[len(m)-1][1])}, true
	}
	if m := phpunitSummary.FindAllStringSubmatch(s, -1); len(m) > 0 {
		last := m[len(m)-1]
		details := map[string]int{}
		for kv := range strings.SplitSeq(last[2], ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), ":")
			details[strings.ToLower(k)] = atoi(strings.TrimSpace(v))
		}
		failed := details["failures"] + details["errors"]
		return counts{passed: atoi(last[1]) - failed - details["skipped"] - details["incomplete"], failed: failed}, true
	}
	if line, ok := lastLine(pestSummary, s); ok {
		w := wordCounts(line)
		return counts{passed: w["passed"], failed: w["failed"]}, true
	}
	return counts{}, false
}
