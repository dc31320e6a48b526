// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package testhome keeps tests away from the home directory of whoever runs
// them. Sandbox, called from an init function of a package's _test.go file,
// points HOME and every variable that relocates an agent's folder away
// before any test of the package runs; Env is the environment of a
// collector (or ccusage) a test starts on a home of its own. The test
// TestTestsNeverReadTheRealHome (tests/homeguard) proves both hold.
package testhome

import (
	"os"
	"path/filepath"

	"github.com/agentotel/agentotel/internal/agents"
	// Every agent whose folders a test must not read.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
)

// absentHome is the HOME of a sandboxed test process: a folder that does
// not exist, so that an agent's default location holds nothing. A test that
// needs a home makes its own (t.Setenv("HOME", t.TempDir())).
var absentHome = filepath.Join(os.TempDir(), "agentotel-test-home-absent")

// Sandbox points HOME at a folder that does not exist and clears every
// variable that relocates an agent's folder, for the rest of the process.
// The Go tool's folders and agentotel's tool cache (scripts/ensure-*.sh),
// which default to below HOME, keep where they were, so that a test that
// runs `go` or installs a tool does not start from nothing.
func Sandbox() {
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "AGENTOTEL_CACHE"} {
		if os.Getenv(k) == "" {
			if v := toolDefault(k); v != "" {
				_ = os.Setenv(k, v)
			}
		}
	}
	_ = os.Setenv("HOME", absentHome)
	for _, v := range agents.LocationVars() {
		_ = os.Unsetenv(v)
	}
}

// toolDefault is where the Go tool or agentotel's scripts keep k with the
// HOME the process started with.
func toolDefault(k string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	switch k {
	case "GOPATH":
		return filepath.Join(home, "go")
	case "GOMODCACHE":
		if gopath := os.Getenv("GOPATH"); gopath != "" {
			return filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
		}
		return filepath.Join(home, "go", "pkg", "mod")
	case "AGENTOTEL_CACHE":
		return filepath.Join(home, ".cache", "agentotel")
	case "GOCACHE":
		if dir, err := os.UserCacheDir(); err == nil {
			return filepath.Join(dir, "go-build")
		}
	}
	return ""
}

// Env is the environment of a process a test starts on home: HOME, and
// every variable that relocates an agent's folder set empty, so that the
// process reads only what the test put below home.
func Env(home string) []string {
	env := []string{"HOME=" + home}
	for _, v := range agents.LocationVars() {
		env = append(env, v+"=")
	}
	return env
}
