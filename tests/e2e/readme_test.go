// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEShowsTheConfigsTheTestsRun: the configurations the README shows for the recipes are the
// files the end-to-end tests run, byte for byte (from their first line that is not a comment on;
// the files' leading comments are left out of the README).
func TestREADMEShowsTheConfigsTheTestsRun(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	for _, name := range []string{"jaeger.yaml", "alerting.yaml", "fleet-machine.yaml", "fleet-gateway.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "config", name))
		require.NoError(t, err)
		body := string(b)
		for strings.HasPrefix(body, "#") {
			_, body, _ = strings.Cut(body, "\n")
		}
		require.NotEmpty(t, body, name)
		assert.Contains(t, string(readme), "```yaml\n"+body+"```", "README's copy of config/%s is out of date", name)
	}
	for _, name := range []string{"default.yaml", "jaeger.yaml", "alerting.yaml", "alerts.yaml", "export.yaml", "fleet-machine.yaml", "fleet-gateway.yaml"} {
		assert.Contains(t, string(readme), "config/"+name, "README links config/%s", name)
	}
}
