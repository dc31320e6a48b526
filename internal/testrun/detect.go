// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package testrun recognizes shell commands that run a test suite and reads
// how many tests ran, passed and failed from their output. It is pure and
// uses only the standard library, so that vendor parsers may use it.
//
// The runners, the commands that select them and the output each count is
// read from are listed in the agent_span connector's README (section
// "Turn rollup").
package testrun

import (
	"path"
	"slices"
	"strings"
)

// Runner names, as Detect returns them (and Counts takes them).
const (
	Go       = "go"       // go test, gotestsum
	Pytest   = "pytest"   // pytest, py.test, python -m pytest
	Unittest = "unittest" // python -m unittest, manage.py test
	Cargo    = "cargo"    // cargo test, cargo nextest run
	Jest     = "jest"
	Vitest   = "vitest"
	Mocha    = "mocha"
	Node     = "node" // node --test
	Bun      = "bun"  // bun test
	Deno     = "deno" // deno test
	NPM      = "npm"  // npm test, npm run test*: the script's runner is unknown
	Yarn     = "yarn"
	PNPM     = "pnpm"
	Make     = "make" // make test / check / test-*: the recipe's runner is unknown
	RSpec    = "rspec"
	Maven    = "maven"
	Gradle   = "gradle"
	Dotnet   = "dotnet"
	Mix      = "mix"
	PHPUnit  = "phpunit"
)

// Detect tells whether a shell command line runs tests, and with which
// runner. A compound command (a && b; c | d) is a test run when one of its
// simple commands is; the first such command names the runner. Commands that
// only compile or list tests (go test -c, cargo test --no-run, pytest
// --collect-only, jest --listTests) are not test runs.
func Detect(command string) (runner string, ok bool) {
	for _, words := range simpleCommands(command) {
		if r := detectWords(words); r != "" {
			return r, true
		}
	}
	return "", false
}

// detectWords recognizes one simple command, given as its words.
func detectWords(w []string) string {
	w = unwrap(w)
	if len(w) == 0 {
		return ""
	}
	prog, args := program(w[0]), w[1:]
	switch prog {
	case "go":
		if first(args) == "test" && !hasAny(args, "-c", "-list", "-h", "-help") && !hasPrefix(args, "-list=") {
			return Go
		}
	case "gotestsum":
		return Go
	case "pytest", "py.test":
		if !hasAny(args, "--collect-only", "--co", "--version", "-h", "--help", "--fixtures", "--markers") {
			return Pytest
		}
	case "cargo":
		if strings.HasPrefix(first(args), "+") {
			args = args[1:] // a toolchain: cargo +nightly test
		}
		args = dropFlags(args)
		switch {
		case first(args) == "test" && !hasAny(args, "--no-run", "-h", "--help"):
			return Cargo
		case first(args) == "nextest" && len(args) > 1 && args[1] == "run" && !hasAny(args, "--no-run"):
			return Cargo
		}
	case "jest":
		if !hasAny(args, "--listTests", "--version", "-v", "--help", "-h", "--showConfig", "--init") {
			return Jest
		}
	case "vitest":
		switch first(dropFlags(args)) {
		case "bench", "init", "list", "typecheck":
		default:
			if !hasAny(args, "--version", "-v", "--help", "-h") {
				return Vitest
			}
		}
	case "mocha", "_mocha":
		if !hasAny(args, "--version", "-V", "--help", "-h") {
			return Mocha
		}
	case "node":
		if hasAny(args, "--test") {
			return Node
		}
	case "bun":
		if first(dropFlags(args)) == "test" {
			return Bun
		}
	case "deno":
		if first(args) == "test" {
			return Deno
		}
	case "npm", "yarn", "pnpm":
		if packageScriptIsTest(prog, args) {
			return map[string]string{"npm": NPM, "yarn": Yarn, "pnpm": PNPM}[prog]
		}
	case "make", "gmake":
		for _, a := range args {
			if isWord(a) && !strings.Contains(a, "=") && isTestTarget(a, true) {
				return Make
			}
		}
	case "rspec":
		return RSpec
	case "mvn", "mvnw":
		if hasAny(args, "test", "verify", "surefire:test") {
			return Maven
		}
	case "gradle", "gradlew":
		for _, a := range args {
			if a == "test" || a == "check" || strings.HasSuffix(a, ":test") || strings.HasSuffix(a, ":check") {
				return Gradle
			}
		}
	case "dotnet":
		if first(args) == "test" {
			return Dotnet
		}
	case "mix":
		if first(args) == "test" {
			return Mix
		}
	case "phpunit", "pest":
		return PHPUnit
	case "python", "python3", "py":
		if len(args) >= 2 && args[0] == "-m" {
			switch args[1] {
			case "pytest":
				return detectWords(append([]string{"pytest"}, args[2:]...))
			case "unittest":
				return Unittest
			}
		}
		if len(args) >= 2 && program(args[0]) == "manage.py" && args[1] == "test" {
			return Unittest
		}
	}
	if strings.HasPrefix(prog, "python3.") && len(args) >= 1 {
		return detectWords(append([]string{"python3"}, args...))
	}
	return ""
}

// unwrap drops what only wraps the command that runs: leading variable
// assignments, time/timeout/env/nice/..., and package runners (npx, uv run,
// poetry run, bundle exec, ...).
func unwrap(w []string) []string {
	for len(w) > 0 {
		if isAssignment(w[0]) {
			w = w[1:]
			continue
		}
		switch program(w[0]) {
		case "time", "command", "exec", "nohup", "sudo", "caffeinate", "xvfb-run", "dotenv":
			w = dropFlags(w[1:])
			if len(w) > 0 && w[0] == "--" {
				w = w[1:]
			}
		case "env":
			w = dropFlags(w[1:])
		case "nice":
			w = w[1:]
			if len(w) > 1 && w[0] == "-n" {
				w = w[2:]
			}
			w = dropFlags(w)
		case "timeout", "gtimeout":
			w = dropFlags(w[1:])
			if len(w) > 0 {
				w = w[1:] // the duration
			}
		case "npx", "bunx", "pnpx":
			w = dropFlags(w[1:])
		case "uv", "poetry", "pipenv", "pdm", "hatch", "rye":
			if len(w) < 2 || w[1] != "run" {
				return w
			}
			w = dropFlags(w[2:])
		case "bundle":
			if len(w) < 2 || w[1] != "exec" {
				return w
			}
			w = w[2:]
		case "pnpm", "yarn":
			if len(w) >= 2 && (w[1] == "exec" || w[1] == "dlx") {
				w = dropFlags(w[2:])
				continue
			}
			if len(w) >= 2 && isTestBinary(w[1]) {
				w = w[1:] // yarn jest: yarn runs a package binary
				continue
			}
			return w
		default:
			return w
		}
	}
	return w
}

// isTestBinary names the JavaScript test runners a package manager can run
// directly (yarn jest, pnpm vitest).
func isTestBinary(s string) bool {
	switch s {
	case "jest", "vitest", "mocha":
		return true
	}
	return false
}

// packageScriptIsTest tells whether npm/yarn/pnpm args run a test script:
// `npm test`, `npm t`, `npm run test:unit`, `yarn test`, `pnpm -r test`.
func packageScriptIsTest(prog string, args []string) bool {
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			// Options that take a value (a workspace, a directory).
			switch a {
			case "--filter", "-F", "-C", "--dir", "--prefix", "-w", "--workspace", "--cwd":
				i++
			}
			continue
		}
		words = append(words, a)
	}
	if len(words) == 0 {
		return false
	}
	switch words[0] {
	case "test", "tst":
		return true
	case "t":
		return prog == "npm"
	case "run", "run-script":
		return len(words) > 1 && isTestTarget(words[1], false)
	case "workspace":
		// yarn workspace <name> test
		return len(words) > 2 && (words[2] == "test" || (words[2] == "run" && len(words) > 3 && isTestTarget(words[3], false)))
	}
	// yarn and pnpm run scripts without "run".
	return prog != "npm" && isTestTarget(words[0], false)
}

// isTestTarget tells whether a make target or package script name runs
// tests: test, tests, test:unit, test-e2e, unit-test, ...; check only for
// make (GNU's standard test target; package scripts use it for linting).
func isTestTarget(s string, forMake bool) bool {
	s = strings.ToLower(s)
	switch {
	case s == "test" || s == "tests":
		return true
	case forMake && s == "check":
		return true
	}
	for _, p := range []string{"test:", "test-", "test_", "tests:", "tests-", "tests_"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	for _, p := range []string{"-test", "_test", ":test", "-tests", "_tests"} {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}

// program is the command name of a word: the base name of a path
// (./node_modules/.bin/jest, /usr/local/go/bin/go, ./gradlew).
func program(word string) string {
	return path.Base(strings.ReplaceAll(word, `\`, "/"))
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// isWord tells a plain argument from an option.
func isWord(s string) bool { return s != "" && s[0] != '-' }

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func dropFlags(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "--" {
		args = args[1:]
	}
	return args
}

func hasAny(args []string, want ...string) bool {
	for _, a := range args {
		if slices.Contains(want, a) {
			return true
		}
	}
	return false
}

func hasPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// simpleCommands splits a shell command line into its simple commands, each
// as a list of words: on ;, &, &&, |, ||, newlines and parentheses outside
// quotes. Quotes are removed from words, backslash escapes honored, and the
// bodies of here-documents skipped (their text is data, not commands). It
// is a reading good enough to find a program and its arguments, not a shell.
func simpleCommands(s string) [][]string {
	var (
		cmds     [][]string
		words    []string
		word     strings.Builder
		inWord   bool
		heredocs []string // delimiters of here-documents whose body starts at the next newline
	)
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				word.WriteByte(s[i])
			}
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' { // a line continuation is just a space
					word.WriteByte(s[i])
					inWord = true
				} else {
					endWord()
				}
			}
		case c == '<' && strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<"):
			endWord()
			i += 2
			if i < len(s) && s[i] == '-' {
				i++
			}
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			start := i
			for i < len(s) && !strings.ContainsRune(" \t\n;&|()<>", rune(s[i])) {
				i++
			}
			if delim := strings.Trim(s[start:i], `'"\`); delim != "" {
				heredocs = append(heredocs, delim)
			}
			i--
		case c == '\n':
			endCmd()
			for _, delim := range heredocs {
				// Skip the body, up to the line that is the delimiter.
				for i < len(s) {
					end := strings.IndexByte(s[i+1:], '\n')
					line := s[i+1:]
					if end >= 0 {
						line = s[i+1 : i+1+end]
					}
					i += len(line) + 1
					if strings.TrimLeft(line, "\t") == delim {
						break
					}
				}
			}
			heredocs = nil
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			endCmd()
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			// A comment, to the end of the line.
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
			} else {
				i += j - 1
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}
