// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		command string
		want    string // "" = not a test run
	}{
		// Go
		{"go test ./...", Go},
		{"go test -v -race -count=1 ./internal/...", Go},
		{"cd backend && go test ./store/... -run TestSKU", Go},
		{"make lint && go test ./store/...", Go},
		{"go mod tidy && go build ./... && go test ./cart/...", Go},
		{"go test -tags fuzz ./... -timeout 30m", Go},
		{"go test ./... 2>&1 | tail -30", Go},
		{"GOFLAGS=-mod=mod CGO_ENABLED=0 go test ./...", Go},
		{"/usr/local/go/bin/go test ./pkg", Go},
		{"timeout 300 go test ./...", Go},
		{"gotestsum --format testname -- ./...", Go},
		{"go test -c -o /tmp/x.test ./pkg", ""},
		{"go test -list . ./pkg", ""},
		{"go build ./... && go vet ./...", ""},
		{"go vet ./...", ""},
		// Python
		{"pytest", Pytest},
		{"pytest tests/test_api.py -x -q", Pytest},
		{"python -m pytest -k 'not slow'", Pytest},
		{"python3 -m pytest tests/", Pytest},
		{"python3.12 -m pytest", Pytest},
		{"uv run pytest -q", Pytest},
		{"poetry run pytest --maxfail=1", Pytest},
		{".venv/bin/pytest tests", Pytest},
		{"source .venv/bin/activate && pytest", Pytest},
		{"pytest --collect-only -q", ""},
		{"python -m unittest discover -s tests", Unittest},
		{"python manage.py test accounts", Unittest},
		{"python hoge.py", ""},
		{"cd myapp && python3 hoge.py", ""},
		{"pip install pytest", ""},
		// Rust
		{"cargo test", Cargo},
		{"cargo test --workspace -- --nocapture", Cargo},
		{"cargo +nightly test", Cargo},
		{"cargo nextest run", Cargo},
		{"cargo test --no-run", ""},
		{"cargo build --release", ""},
		// JavaScript
		{"npx jest src/user.test.ts", Jest},
		{"npx --yes jest --coverage", Jest},
		{"./node_modules/.bin/jest", Jest},
		{"yarn jest --ci", Jest},
		{"jest --listTests", ""},
		{"npx vitest run", Vitest},
		{"vitest run src/", Vitest},
		{"pnpm vitest --reporter=verbose", Vitest},
		{"npx vitest bench", ""},
		{"npx mocha test/**/*.spec.js", Mocha},
		{"node --test test/", Node},
		{"node index.js", ""},
		{"bun test", Bun},
		{"bun run build", ""},
		{"deno test --allow-read", Deno},
		{"npm test", NPM},
		{"npm t", NPM},
		{"npm run test:unit -- --watch=false", NPM},
		{"npm run-script test", NPM},
		{"npm --prefix web test", NPM},
		{"npm run build", ""},
		{"npm run lint", ""},
		{"npm install", ""},
		{"yarn test", Yarn},
		{"yarn test:e2e", Yarn},
		{"yarn workspace api test", Yarn},
		{"yarn build", ""},
		{"pnpm test", PNPM},
		{"pnpm -r test", PNPM},
		{"pnpm --filter web run test", PNPM},
		{"pnpm run check", ""},
		// Others
		{"make test", Make},
		{"make -j4 check", Make},
		{"make test-integration", Make},
		{"make lint", ""},
		{"make", ""},
		{"bundle exec rspec spec/models", RSpec},
		{"rspec", RSpec},
		{"mvn -q test", Maven},
		{"./mvnw verify", Maven},
		{"mvn package -DskipTests", ""},
		{"./gradlew test", Gradle},
		{"./gradlew :app:test --tests '*UserTest'", Gradle},
		{"./gradlew assemble", ""},
		{"dotnet test", Dotnet},
		{"dotnet build", ""},
		{"mix test test/user_test.exs", Mix},
		{"vendor/bin/phpunit", PHPUnit},
		// Shell shapes
		{"echo 'go test ./...'", ""},
		{`git commit -m "run go test before merging"`, ""},
		{"git commit -m \"$(cat <<'EOF'\nFix flaky go test\n\npytest now passes\nEOF\n)\"", ""},
		{"cat > run.sh <<EOF\ngo test ./...\nEOF\nchmod +x run.sh", ""},
		{"cat > run.sh <<'EOF'\npytest\nEOF\ngo test ./...", Go},
		{"# run the suite\ngo test ./...", Go},
		{"go build ./... # then go test", ""},
		{"ls -la", ""},
		{"", ""},
		{"(cd api && npm test)", NPM},
		{"go test \\\n  ./...", Go},
		{"env -i PATH=$PATH go test ./...", Go},
		{"nice -n 10 cargo test", Cargo},
	} {
		got, ok := Detect(tc.command)
		assert.Equal(t, tc.want, got, "Detect(%q)", tc.command)
		assert.Equal(t, tc.want != "", ok, "Detect(%q) ok", tc.command)
	}
}

func TestSimpleCommands(t *testing.T) {
	assert.Equal(t, [][]string{{"cd", "a b"}, {"go", "test", "./..."}, {"tail", "-5"}},
		simpleCommands(`cd "a b" && go test ./... | tail -5`))
	assert.Equal(t, [][]string{{"echo", "x;y"}, {"true"}}, simpleCommands(`echo 'x;y'; true`))
	assert.Equal(t, [][]string{{"echo", `a"b`}}, simpleCommands(`echo "a\"b"`))
	assert.Equal(t, [][]string{{"echo", "unterminated"}}, simpleCommands(`echo 'unterminated`))
	assert.Equal(t, [][]string{{"cat", ">f"}, {"done"}}, simpleCommands("cat >f <<-END\n\tgo test\n\tEND\ndone"))
}

func FuzzDetect(f *testing.F) {
	for _, s := range []string{"go test ./...", "cat <<EOF\nx\nEOF", `echo "a\`, "npm run test:unit", "'", "<<"} {
		f.Add(s)
	}
	f.Fuzz(func(_ *testing.T, s string) {
		_, _ = Detect(s) // must not panic
	})
}
