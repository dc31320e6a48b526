// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The outputs below are the shapes each runner prints (written for these
// tests; names and numbers invented), including how Claude Code hands a
// failed command's output over: "Exit code N" first.
func TestCounts(t *testing.T) {
	type want struct{ run, passed, failed int }
	for _, tc := range []struct {
		name, runner, output string
		want                 *want // nil = nothing countable
	}{
		{
			name: "go test -v", runner: Go,
			output: "=== RUN   TestParse\n=== RUN   TestParse/empty\n=== RUN   TestParse/unicode\n--- PASS: TestParse (0.00s)\n" +
				"    --- PASS: TestParse/empty (0.00s)\n    --- PASS: TestParse/unicode (0.00s)\n=== RUN   TestStore\n" +
				"=== PAUSE TestStore\n=== CONT  TestStore\n--- PASS: TestStore (0.01s)\n=== RUN   TestSkip\n" +
				"    store_test.go:40: needs a database\n--- SKIP: TestSkip (0.00s)\nPASS\nok  \texample.com/shop/store\t0.014s\n",
			want: &want{4, 4, 0},
		},
		{
			name: "go test -v failing, as Claude Code reports it", runner: Go,
			output: "Exit code 1\n=== RUN   TestSKU\n    sku_test.go:12: got \"sku:%!d(string=A1)\", want \"sku:A1\"\n" +
				"--- FAIL: TestSKU (0.00s)\n=== RUN   TestPrice\n--- PASS: TestPrice (0.00s)\nFAIL\n" +
				"FAIL\texample.com/inventory/store\t0.006s\nFAIL",
			want: &want{2, 1, 1},
		},
		{
			name: "go test without -v lists packages, not tests", runner: Go,
			output: "ok  \texample.com/shop/cart\t0.012s\nok  \texample.com/shop/store\t(cached)\n?   \texample.com/shop/cmd\t[no test files]\n",
		},
		{
			name: "go test without -v failing lists only failures", runner: Go,
			output: "--- FAIL: TestSKU (0.00s)\n    sku_test.go:12: mismatch\nFAIL\nFAIL\texample.com/inventory/store\t0.006s\n",
		},
		{
			name: "go test -json", runner: Go,
			output: `{"Time":"2025-11-26T12:00:00Z","Action":"run","Package":"p","Test":"TestA"}` + "\n" +
				`{"Time":"2025-11-26T12:00:00Z","Action":"pass","Package":"p","Test":"TestA","Elapsed":0}` + "\n" +
				`{"Time":"2025-11-26T12:00:00Z","Action":"fail","Package":"p","Test":"TestB","Elapsed":0}` + "\n" +
				`{"Time":"2025-11-26T12:00:00Z","Action":"fail","Package":"p","Elapsed":0.01}` + "\n",
			want: &want{2, 1, 1},
		},
		{
			name: "gotestsum", runner: Go,
			output: "✓  store (14ms)\n✖  cart (20ms)\n\n=== Failed\n=== FAIL: cart TestTotal (0.00s)\n\nDONE 12 tests, 1 skipped, 2 failures in 0.512s\n",
			want:   &want{11, 9, 2},
		},
		{
			name: "pytest", runner: Pytest,
			output: "============================= test session starts ==============================\n" +
				"platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0\nrootdir: /home/dev/api\ncollected 7 items\n\n" +
				"tests/test_users.py ....F.s                                              [100%]\n\n" +
				"=================================== FAILURES ===================================\n" +
				"___________________________ test_delete_missing_user ___________________________\n\n" +
				"E       assert 500 == 404\n\n" +
				"=========================== short test summary info ============================\n" +
				"FAILED tests/test_users.py::test_delete_missing_user - assert 500 == 404\n" +
				"==================== 1 failed, 5 passed, 1 skipped in 0.42s ====================\n",
			want: &want{6, 5, 1},
		},
		{
			name: "pytest -q", runner: Pytest,
			output: "..........                                                               [100%]\n10 passed in 0.05s\n",
			want:   &want{10, 10, 0},
		},
		{
			name: "pytest errors and warnings", runner: Pytest,
			output: "=========== 2 failed, 8 passed, 3 warnings, 1 error in 1.20s (0:00:01) ===========\n",
			want:   &want{11, 8, 3},
		},
		{
			name: "pytest no tests", runner: Pytest,
			output: "============================ no tests ran in 0.01s =============================\n",
			want:   &want{0, 0, 0},
		},
		{
			name: "pytest collection error before any test", runner: Pytest,
			output: "Exit code 4\nERROR: file or directory not found: tests/test_nope.py\n",
		},
		{
			name: "unittest ok", runner: Unittest,
			output: "......s\n----------------------------------------------------------------------\nRan 7 tests in 0.003s\n\nOK (skipped=1)\n",
			want:   &want{6, 6, 0},
		},
		{
			name: "unittest failed", runner: Unittest,
			output: "Exit code 1\n..F.E\n======================================================================\nFAIL: test_total (test_cart.CartTest.test_total)\n" +
				"----------------------------------------------------------------------\nRan 5 tests in 0.010s\n\nFAILED (failures=1, errors=1)\n",
			want: &want{5, 3, 2},
		},
		{
			name: "cargo test", runner: Cargo,
			output: "   Compiling shop v0.1.0 (/home/dev/shop)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.21s\n" +
				"     Running unittests src/lib.rs (target/debug/deps/shop-1a2b3c)\n\nrunning 3 tests\ntest cart::tests::empty ... ok\n" +
				"test cart::tests::total ... ok\ntest cart::tests::discount ... FAILED\n\nfailures:\n\nfailures:\n    cart::tests::discount\n\n" +
				"test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n" +
				"error: test failed, to rerun pass `--lib`\n",
			want: &want{3, 2, 1},
		},
		{
			name: "cargo test, several binaries and doc tests", runner: Cargo,
			output: "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n" +
				"     Running tests/api.rs (target/debug/deps/api-9f8e)\n\nrunning 2 tests\n..\n" +
				"test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\n" +
				"   Doc-tests shop\n\nrunning 1 test\ntest src/lib.rs - add (line 5) ... ok\n\n" +
				"test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.12s\n",
			want: &want{6, 6, 0},
		},
		{
			name: "cargo nextest", runner: Cargo,
			output: "    Starting 5 tests across 1 binary\n        PASS [   0.004s] shop cart::tests::empty\n" +
				"------------\n     Summary [   0.010s] 5 tests run: 4 passed, 1 failed, 0 skipped\n",
			want: &want{5, 4, 1},
		},
		{
			name: "cargo build error before tests", runner: Cargo,
			output: "Exit code 101\nerror[E0425]: cannot find value `x` in this scope\n",
		},
		{
			name: "jest", runner: Jest,
			output: "PASS src/user.test.ts\nFAIL src/validator.test.ts\n  ● UserValidator › rejects null\n\n" +
				"Test Suites: 1 failed, 1 passed, 2 total\nTests:       1 failed, 1 skipped, 4 passed, 6 total\n" +
				"Snapshots:   0 total\nTime:        1.52 s\nRan all test suites.\n",
			want: &want{5, 4, 1},
		},
		{
			name: "jest with colors", runner: Jest,
			output: "\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[32m5 passed\x1b[39m\x1b[22m, 5 total\n",
			want:   &want{5, 5, 0},
		},
		{
			name: "vitest", runner: Vitest,
			output: " ✓ src/cart.test.ts (3 tests) 4ms\n ❯ src/user.test.ts (2 tests | 1 failed) 6ms\n\n" +
				" Test Files  1 failed | 1 passed (2)\n      Tests  1 failed | 3 passed | 1 skipped (5)\n" +
				"   Start at  12:00:00\n   Duration  512ms (transform 40ms, setup 0ms, collect 60ms, tests 10ms)\n",
			want: &want{4, 3, 1},
		},
		{
			name: "vitest green", runner: Vitest,
			output: " Test Files  2 passed (2)\n      Tests  5 passed (5)\n",
			want:   &want{5, 5, 0},
		},
		{
			name: "mocha", runner: Mocha,
			output: "  Cart\n    ✔ adds an item\n    ✔ totals\n    1) applies a discount\n    - later\n\n" +
				"  2 passing (12ms)\n  1 pending\n  1 failing\n\n  1) Cart\n       applies a discount:\n     AssertionError: expected 9 to equal 8\n",
			want: &want{3, 2, 1},
		},
		{
			name: "node --test, spec reporter", runner: Node,
			output: "✔ adds (0.5ms)\n✖ totals (1.2ms)\nℹ tests 2\nℹ suites 0\nℹ pass 1\nℹ fail 1\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 48.1\n",
			want:   &want{2, 1, 1},
		},
		{
			name: "node --test, TAP reporter", runner: Node,
			output: "TAP version 13\nok 1 - adds\nok 2 - totals\n1..2\n# tests 2\n# suites 0\n# pass 2\n# fail 0\n# cancelled 0\n",
			want:   &want{2, 2, 0},
		},
		{
			name: "bun test", runner: Bun,
			output: "src/cart.test.ts:\n✓ adds [0.10ms]\n✗ totals [0.20ms]\n\n 4 pass\n 1 fail\n 9 expect() calls\nRan 5 tests across 2 files. [24.00ms]\n",
			want:   &want{5, 4, 1},
		},
		{
			name: "deno test", runner: Deno,
			output: "running 3 tests from ./cart_test.ts\nadds ... ok (1ms)\n\nFAILED | 2 passed | 1 failed (12ms)\n\nerror: Test failed\n",
			want:   &want{3, 2, 1},
		},
		{
			name: "npm test running jest", runner: NPM,
			output: "\n> shop@1.0.0 test\n> jest\n\nPASS src/cart.test.js\nTests:       3 passed, 3 total\n",
			want:   &want{3, 3, 0},
		},
		{
			name: "npm test running vitest", runner: NPM,
			output: "\n> web@0.1.0 test\n> vitest run\n\n Test Files  1 passed (1)\n      Tests  2 passed (2)\n",
			want:   &want{2, 2, 0},
		},
		{
			name: "npm test with no runner output", runner: NPM,
			output: "\n> shop@1.0.0 test\n> echo \"Error: no test specified\" && exit 1\n\nError: no test specified\n",
		},
		{
			name: "make test running go test -v", runner: Make,
			output: "go test -v ./...\n=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \tp\t0.01s\n",
			want:   &want{1, 1, 0},
		},
		{
			name: "rspec", runner: RSpec,
			output: "..F*\n\nFailures:\n\n  1) User validates email\n\nFinished in 0.05 seconds (files took 0.3 seconds to load)\n6 examples, 1 failure, 1 pending\n",
			want:   &want{5, 4, 1},
		},
		{
			name: "maven surefire", runner: Maven,
			output: "[INFO] Running com.example.CartTest\n[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s - in com.example.CartTest\n" +
				"[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.02 s <<< FAILURE! - in com.example.UserTest\n" +
				"[INFO] \n[INFO] Results:\n[INFO] \n[ERROR] Failures: \n[ERROR]   UserTest.rejectsNull:21 expected: <true> but was: <false>\n[INFO] \n" +
				"[ERROR] Tests run: 5, Failures: 1, Errors: 0, Skipped: 1\n[INFO] \n[INFO] BUILD FAILURE\n",
			want: &want{4, 3, 1},
		},
		{
			name: "gradle green says nothing", runner: Gradle,
			output: "> Task :app:test\n\nBUILD SUCCESSFUL in 4s\n5 actionable tasks: 2 executed, 3 up-to-date\n",
		},
		{
			name: "gradle failing", runner: Gradle,
			output: "> Task :app:test FAILED\n\nUserTest > rejectsNull() FAILED\n    org.opentest4j.AssertionFailedError at UserTest.java:21\n\n" +
				"5 tests completed, 1 failed, 1 skipped\n\nFAILURE: Build failed with an exception.\n",
			want: &want{4, 3, 1},
		},
		{
			name: "dotnet test (VSTest)", runner: Dotnet,
			output: "  Determining projects to restore...\nTest run for /src/Shop.Tests/bin/Debug/net8.0/Shop.Tests.dll (.NETCoreApp,Version=v8.0)\n" +
				"Starting test execution, please wait...\n\nFailed!  - Failed:     1, Passed:     4, Skipped:     0, Total:     5, Duration: 61 ms - Shop.Tests.dll (net8.0)\n",
			want: &want{5, 4, 1},
		},
		{
			name: "dotnet test (.NET 9 summary)", runner: Dotnet,
			output: "Restore complete (0.4s)\n  Shop.Tests test succeeded (1.2s)\n\nTest summary: total: 5, failed: 0, succeeded: 5, skipped: 0, duration: 1.2s\nBuild succeeded in 3.1s\n",
			want:   &want{5, 5, 0},
		},
		{
			name: "mix test", runner: Mix,
			output: "...\n\n  1) test totals (CartTest)\n     test/cart_test.exs:8\n\nFinished in 0.04 seconds (0.02s async, 0.02s sync)\n1 doctest, 5 tests, 1 failure, 1 skipped\n",
			want:   &want{5, 4, 1},
		},
		{
			name: "phpunit ok", runner: PHPUnit,
			output: "PHPUnit 11.0.0 by Sebastian Bergmann and contributors.\n\n.....                                               5 / 5 (100%)\n\nTime: 00:00.012, Memory: 8.00 MB\n\nOK (5 tests, 10 assertions)\n",
			want:   &want{5, 5, 0},
		},
		{
			name: "phpunit failures", runner: PHPUnit,
			output: "..F.E\n\nFAILURES!\nTests: 5, Assertions: 9, Failures: 1, Errors: 1.\n",
			want:   &want{5, 3, 2},
		},
		{
			name: "unknown runner", runner: "tox", output: "3 passed in 0.1s\n",
		},
		{
			name: "empty output", runner: Pytest, output: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, passed, failed, ok := Counts(tc.runner, tc.output)
			if tc.want == nil {
				assert.False(t, ok, "nothing countable, got run=%d passed=%d failed=%d", run, passed, failed)
				assert.Zero(t, run+passed+failed)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, *tc.want, want{run, passed, failed})
		})
	}
}

// Every runner Detect can return has a way to be counted, or is known not
// to print counts (Gradle on success); none is silently unknown to Counts.
func TestEveryRunnerHasAParser(t *testing.T) {
	for _, r := range []string{Go, Pytest, Unittest, Cargo, Jest, Vitest, Mocha, Node, Bun, Deno, RSpec, Maven, Gradle, Dotnet, Mix, PHPUnit} {
		assert.Contains(t, parsersByRunner, r)
	}
}

func FuzzCounts(f *testing.F) {
	f.Add(Go, "=== RUN x\n--- PASS: x")
	f.Add(Unittest, "Ran 3 tests in 0.1s\nFAILED (failures=1)")
	f.Add(NPM, "Tests: 1 passed, 1 total")
	f.Add(Unittest, "Ran 1 test in 0.1s\nOK (skipped=5)")
	f.Fuzz(func(t *testing.T, runner, output string) {
		run, passed, failed, _ := Counts(runner, output)
		if run != passed+failed || passed < 0 || failed < 0 {
			t.Fatalf("run %d != passed %d + failed %d", run, passed, failed)
		}
	})
}
