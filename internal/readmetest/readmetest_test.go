// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package readmetest

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlocksInReadmeOrder(t *testing.T) {
	t.Chdir(t.TempDir())
	readme := "# x\n```yaml\nconnectors:\n  agent_span/full:\n    a: 1\n  agent_span:\n  other: {}\n```\n" +
		"text\n```yaml\nprocessors:\n  agent_span: {}\nconnectors:\n  agent_span:\n    b: 2\n```\n"
	require.NoError(t, os.WriteFile("README.md", []byte(readme), 0o600))
	assert.Equal(t, []Block{
		{Name: "agent_span", Section: nil},
		{Name: "agent_span/full", Section: map[string]any{"a": 1}},
		{Name: "agent_span", Section: map[string]any{"b": 2}},
	}, Blocks(t, "connectors", "agent_span"))
}
