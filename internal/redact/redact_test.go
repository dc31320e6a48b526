// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The secrets below are fakes in the shapes real ones have (lengths,
// alphabets, prefixes); several are the vendors' own documentation examples.
const (
	jwt        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	ghp        = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	ghs        = "ghs_Rx3vN8mQ2kT7pL9wZ4cB6dF1hJ5sY0aU3eGi"
	githubPAT  = "github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJklmnopqrstuvwxYZ0123456789"
	glpat      = "glpat-xR4nB7vK2mQ9tL5wZ8cD"
	slackBot   = "xoxb-2385942043-3467294210937-Vn8KxQ2mT4pL7wZ9cB1dF6hJ"
	openaiProj = "sk-proj-Ab3dEf6hIj9kLmN2pQr5sTu8vWx1yZa4BcDeFgHiJkLmNoPq"
	openaiOld  = "sk-Tq8ZrW2mN5kP9vX3cB7dF1hJ4sL6aE0gYuIoRtQwEr1234"
	anthropic  = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-x_Y9z8W7v6U5t4S3r2Q1p0ONmLkJiHgFeDcBaZyXwVuTsRqPoNm-AbCdEfAA"
	awsKeyID   = "AKIAIOSFODNN7EXAMPLE"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	googleKey  = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	stripeLive = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	npmToken   = "npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Y"
	hfToken    = "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
	pypiToken  = "pypi-AgEIcHlwaS5vcmcCJGE4ZjY2ZjA2LTRmMjYtNDYxYy1hYjk3LWE2M2YwYzE5N2U4NAACKlsz"
	sendgrid   = "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"
)

func TestStringRedactsSecrets(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			"bearer header", `curl -sS -H "Authorization: Bearer ` + jwt + `" https://api.example.com/v1/me`,
			`curl -sS -H "Authorization: Bearer [REDACTED]" https://api.example.com/v1/me`,
		},
		{
			"bearer header without space", `curl -H 'authorization:bearer abc123def456ghi789' https://x.test`,
			`curl -H 'authorization:bearer [REDACTED]' https://x.test`,
		},
		{
			"basic header", `curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' https://jira.example.com/rest/api/2/issue/ABC-1`,
			`curl -H 'Authorization: Basic [REDACTED]' https://jira.example.com/rest/api/2/issue/ABC-1`,
		},
		{
			"github token header", `curl -H "Authorization: token ` + ghp + `" https://api.github.com/user/repos`,
			`curl -H "Authorization: token [REDACTED]" https://api.github.com/user/repos`,
		},
		{
			"bare bearer", `TOKEN_HEADER="Bearer 9f8e7d6c5b4a39281706" ./deploy.sh`,
			`TOKEN_HEADER="Bearer [REDACTED]" ./deploy.sh`,
		},
		{
			"api key header", `curl https://api.anthropic.com/v1/messages -H "x-api-key: ` + anthropic + `" -H "anthropic-version: 2023-06-01"`,
			`curl https://api.anthropic.com/v1/messages -H "x-api-key: [REDACTED]" -H "anthropic-version: 2023-06-01"`,
		},
		{
			"gitlab private token header", `curl --header "PRIVATE-TOKEN: ` + glpat + `" https://gitlab.example.com/api/v4/projects`,
			`curl --header "PRIVATE-TOKEN: [REDACTED]" https://gitlab.example.com/api/v4/projects`,
		},
		{
			"cookie header", `curl -H "Cookie: sessionid=8f14e45fceea167a5a36dedd4bea2543; csrftoken=abc" https://app.test/`,
			`curl -H "Cookie: [REDACTED]" https://app.test/`,
		},
		{"export token", "export GITHUB_TOKEN=" + ghp, "export GITHUB_TOKEN=[REDACTED]"},
		{"inline env quoted", `OPENAI_API_KEY="` + openaiProj + `" python app.py`, `OPENAI_API_KEY="[REDACTED]" python app.py`},
		{
			"aws secret", "export AWS_SECRET_ACCESS_KEY=" + awsSecret + " && aws s3 ls",
			"export AWS_SECRET_ACCESS_KEY=[REDACTED] && aws s3 ls",
		},
		{"aws key id by prefix", "aws configure set aws_access_key_id " + awsKeyID, "aws configure set aws_access_key_id [REDACTED]"},
		{"pgpassword", "PGPASSWORD=hunter2 psql -h db.internal -U app app_prod", "PGPASSWORD=[REDACTED] psql -h db.internal -U app app_prod"},
		{"db pass", "DB_PASS='p@ss w0rd' npm start", "DB_PASS='[REDACTED]' npm start"},
		{"rails secret", "SECRET_KEY_BASE=3f2a9c1e7b bin/rails s", "SECRET_KEY_BASE=[REDACTED] bin/rails s"},
		{"two assignments", "A_TOKEN=abc B_SECRET=def make", "A_TOKEN=[REDACTED] B_SECRET=[REDACTED] make"},
		{"python code", `client = OpenAI(api_key = "` + openaiOld + `")`, `client = OpenAI(api_key = "[REDACTED]")`},
		{
			"postgres url", "psql postgres://admin:s3cr3t-P4ss@db.internal:5432/app?sslmode=require",
			"psql postgres://admin:[REDACTED]@db.internal:5432/app?sslmode=require",
		},
		{
			"database url env", "DATABASE_URL=mysql://root:toor@127.0.0.1:3306/shop go run .",
			"DATABASE_URL=mysql://root:[REDACTED]@127.0.0.1:3306/shop go run .",
		},
		{
			"password with at sign", "mongosh 'mongodb+srv://app:p@ssw0rd@cluster0.ab1cd.mongodb.net/test'",
			"mongosh 'mongodb+srv://app:[REDACTED]@cluster0.ab1cd.mongodb.net/test'",
		},
		{
			"git remote with token", "git clone https://x-access-token:" + ghs + "@github.com/acme/api.git",
			"git clone https://x-access-token:[REDACTED]@github.com/acme/api.git",
		},
		{
			"redis url, empty user", "redis-cli -u redis://:mypassword@localhost:6379 ping",
			"redis-cli -u redis://:[REDACTED]@localhost:6379 ping",
		},
		{"curl -u", "curl -u admin:hunter2 http://localhost:9200/_cat/indices", "curl -u admin:[REDACTED] http://localhost:9200/_cat/indices"},
		{"curl --user=", "curl --user=deploy:Tr0ub4dor https://ci.test", "curl --user=deploy:[REDACTED] https://ci.test"},
		{"password flag =", "mysql -u root --password=hunter2 app", "mysql -u root --password=[REDACTED] app"},
		{
			"password flag space", "docker login --username ci --password hunter2 registry.example.com",
			"docker login --username ci --password [REDACTED] registry.example.com",
		},
		{"token flag quoted", `vault login --token "hvs.CAESIJ3h7q"`, `vault login --token "[REDACTED]"`},
		{
			"kubectl literal", "kubectl create secret generic db --from-literal=password=hunter2 --from-literal=user=app",
			"kubectl create secret generic db --from-literal=password=[REDACTED] --from-literal=user=app",
		},
		{
			"command in JSON arguments", `{"command":"export DB_PASSWORD=\"hunter2 x\" \u0026\u0026 ./migrate","description":"migrate"}`,
			`{"command":"export DB_PASSWORD=\"[REDACTED]\" \u0026\u0026 ./migrate","description":"migrate"}`,
		},
		{
			"query token in JSON", `{"url":"https://api.test/r?access_token=abc123def456\u0026page=2"}`,
			`{"url":"https://api.test/r?access_token=[REDACTED]\u0026page=2"}`,
		},
		{
			"query token", `curl "https://api.example.com/data?access_token=abc123def456&page=2"`,
			`curl "https://api.example.com/data?access_token=[REDACTED]&page=2"`,
		},
		{
			"s3 presigned", "https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=2f9e6c0b3a71d8e4",
			"https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[REDACTED]&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=[REDACTED]",
		},
		{
			"azure sas", "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-01-01T00:00:00Z&sig=Zm9vYmFy%2Bc2lnbmF0dXJl%3D",
			"https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-01-01T00:00:00Z&sig=[REDACTED]",
		},
		{
			"google key in query", "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=" + googleKey,
			"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=[REDACTED]",
		},
		{
			"json body", `curl -d '{"username":"ci","password":"hunter2"}' https://auth.test/login`,
			`curl -d '{"username":"ci","password":"[REDACTED]"}' https://auth.test/login`,
		},
		{
			"mcp arguments", `{"url":"https://api.example.com","headers":{"X-API-Key":"k-1234567890"},"clientSecret":"s3cr3t","query":"open issues"}`,
			`{"url":"https://api.example.com","headers":{"X-API-Key":"[REDACTED]"},"clientSecret":"[REDACTED]","query":"open issues"}`,
		},
		{
			"yaml heredoc", "cat > compose.yaml <<'EOF'\nservices:\n  db:\n    environment:\n      POSTGRES_PASSWORD: hunter2\n      POSTGRES_USER: app\nEOF",
			"cat > compose.yaml <<'EOF'\nservices:\n  db:\n    environment:\n      POSTGRES_PASSWORD: [REDACTED]\n      POSTGRES_USER: app\nEOF",
		},
		{
			"aws credentials file", "cat > ~/.aws/credentials <<EOF\n[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = " + awsSecret + "\nregion = eu-west-1\nEOF",
			"cat > ~/.aws/credentials <<EOF\n[default]\naws_access_key_id = [REDACTED]\naws_secret_access_key = [REDACTED]\nregion = eu-west-1\nEOF",
		},
		{"docker login -p", "docker login -u ci -p Tr0ub4dor3 registry.example.com", "docker login -u ci -p [REDACTED] registry.example.com"},
		{"mysql -p glued", "mysql -h db -u root -pS3cret app < dump.sql", "mysql -h db -u root -p[REDACTED] app < dump.sql"},
		{
			"netrc", "echo 'machine api.heroku.com login me@example.com password 01234567-89ab-cdef' >> ~/.netrc",
			"echo 'machine api.heroku.com login me@example.com password [REDACTED]' >> ~/.netrc",
		},
		{
			"private key", "cat > id_ed25519 <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx\n-----END OPENSSH PRIVATE KEY-----\nEOF",
			"cat > id_ed25519 <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----\nEOF",
		},
		{"private key cut short", "echo '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7", "echo '-----BEGIN RSA PRIVATE KEY-----[REDACTED]"},
		{"github fine-grained", "gh auth login --with-token <<< " + githubPAT, "gh auth login --with-token <<< [REDACTED]"},
		{"npmrc", "npm config set //registry.npmjs.org/:_authToken " + npmToken, "npm config set //registry.npmjs.org/:_authToken [REDACTED]"},
		{
			"slack", "curl -X POST -d 'token=" + slackBot + "&channel=C1' https://slack.com/api/chat.postMessage",
			"curl -X POST -d 'token=[REDACTED]&channel=C1' https://slack.com/api/chat.postMessage",
		},
		{"slack bare", "echo " + slackBot + " | pbcopy", "echo [REDACTED] | pbcopy"},
		{"openai bare", "echo " + openaiOld, "echo [REDACTED]"},
		{"anthropic bare", "claude config set apiKey " + anthropic, "claude config set apiKey [REDACTED]"},
		{"stripe", "stripe listen --api-key " + stripeLive, "stripe listen --api-key [REDACTED]"},
		{"huggingface", "huggingface-cli login --token " + hfToken, "huggingface-cli login --token [REDACTED]"},
		{"hf bare", "git clone https://huggingface.co/x " + hfToken, "git clone https://huggingface.co/x [REDACTED]"},
		{"pypi", "twine upload -u __token__ -p " + pypiToken + " dist/*", "twine upload -u __token__ -p [REDACTED] dist/*"},
		{"sendgrid", "SENDGRID=" + sendgrid + " node mail.js", "SENDGRID=[REDACTED] node mail.js"},
		{"jwt bare", "jwt decode " + jwt, "jwt decode [REDACTED]"},
		{"gitlab bare", "glab auth login --stdin <<< " + glpat, "glab auth login --stdin <<< [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, got, String(got), "redacting twice changes more")
		})
	}
}

// Lookalikes: texts that mention secrets, or look like them, without holding one.
func TestStringKeepsLookalikes(t *testing.T) {
	for _, in := range []string{
		`git commit -m "fix token refresh when the password expires"`,
		"export TOKENIZERS_PARALLELISM=false",
		"MAX_TOKENS=4096 python run.py --max-tokens 2048",
		"cd /home/me && export PWD=/home/me OLDPWD=/tmp",
		"SSH_AUTH_SOCK=/tmp/ssh-XXXXaGJk/agent.1234 ssh-add -l",
		"PASSWORD_FILE=/run/secrets/db_password ./start.sh",
		"GIT_ASKPASS=/usr/bin/true git fetch origin",
		"export GITHUB_TOKEN=$(gh auth token)",
		"export OPENAI_API_KEY=${OPENAI_API_KEY:-}",
		`curl -H "Authorization: Bearer $TOKEN" https://api.github.com/user`,
		`curl -H "Authorization: Bearer ${API_TOKEN}" -H "X-Api-Key: $KEY" https://api.test`,
		`curl -u "$USER:$PASS" https://api.test`,
		"psql postgres://app:${DB_PASSWORD}@db:5432/app",
		"git clone git@github.com:acme/api.git",
		"git clone https://github.com/acme/api.git && ssh deploy@10.0.0.5",
		"curl http://localhost:8080/api/v1/users?page=2&sort=name&token_type=bearer",
		`grep -rn "Bearer authentication" docs/`,
		`grep -n "Set-Cookie:" access.log`,
		"pip install scikit-learn && git checkout sk-learn-experiments-for-the-new-pipeline",
		"git checkout -b task-management-dashboard-component-refactor",
		"go test -run=TestTokenRefresh ./internal/auth/...",
		`kubectl get secret my-secret -o yaml`,
		`if [ "$TOKEN" == "" ]; then echo missing; fi`,
		`python -c 'token = tokenize(line)'`,
		"docker login --username ci --password-stdin < pass.txt",
		"aws secretsmanager get-secret-value --secret-id prod/db SECRET_NAME=prod-db",
		"npm run build -- --mode=production --auth-type=oauth",
		"/home/me/project/src/auth/token_store.go",
		"https://example.com/search?q=password+reset&lang=en",
		"git log --author=alice --since=2.weeks",
		`{"max_tokens":"4096","password":"","model":"claude-opus-4-7"}`,
		"vault kv get -field=password secret/db",
		"echo AKIAEXAMPLE and ghp_short and sk-short",
		"token_count=12 sort_key=name primary_key=id",
		"ls ~/.config/gh/hosts.yml --token-file ~/.token",
		"Authorization: Bearer [REDACTED]",
		"az storage blob list --account-name acct --auth-mode login",
		`password: ${{ secrets.DB_PASSWORD }}`,
		"mysql -u root -p app",
		"docker login -u ci --password-stdin registry.example.com",
		"ssh -p 2222 deploy@host && git log -p --stat",
		"tar -xzpf release.tgz",
		"region = eu-west-1\noutput = json",
		`git commit -m "reset password via login page"`,
		"",
	} {
		assert.Equal(t, in, String(in))
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "api_key": true, "apiKey": true, "APIKey": true, "x-api-key": true,
		"clientSecret": true, "PGPASSWORD": true, "X-Amz-Signature": true, "X-Amz-Credential": true,
		"_authToken": true, "access_token": true, "AWS_SECRET_ACCESS_KEY": true, "sig": true,
		"DB_PWD": true, "SMTP_PASS": true, "GITLAB_PAT": true, "NPM_AUTH": true, "PRIVATE_KEY": true,
		"auth-token": true, "password": true, "csrftoken": true,
		"PWD": false, "OLDPWD": false, "TOKENIZERS_PARALLELISM": false, "MAX_TOKENS": false,
		"PASSWORD_FILE": false, "SSH_AUTH_SOCK": false, "GIT_ASKPASS": false, "author": false,
		"AWS_ACCESS_KEY_ID": false, "sort_key": false, "primary_key": false, "token_type": false,
		"key": false, "passthrough": false, "bypass": false, "secret-id": false, "": false,
	} {
		assert.Equal(t, want, SecretName(name), name)
	}
}

func TestStringReturnsCleanTextItself(t *testing.T) {
	// Text without a secret comes back as the same string, not a copy.
	for _, in := range []string{"go test ./... && git status --short", "/home/me/src/auth/token.go", "npm run lint -- --fix"} {
		out := String(in)
		assert.Equal(t, in, out)
		assert.Same(t, unsafe.StringData(in), unsafe.StringData(out))
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"export A_TOKEN=x", "https://u:p@h/", "Authorization: Bearer 123456789", "-----BEGIN PRIVATE KEY-----"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := String(s)
		if twice := String(once); twice != once {
			t.Errorf("not idempotent: %q → %q → %q", s, once, twice)
		}
	})
}

func BenchmarkString(b *testing.B) {
	cmds := []string{
		"go test -count=1 ./internal/... 2>&1 | tail -20",
		"git log --oneline -5 && git status --short",
		`curl -sS -H "Authorization: Bearer ` + jwt + `" https://api.example.com/v1/me`,
		"export GITHUB_TOKEN=" + ghp + " && gh pr list",
		"/home/me/project/src/components/Button.tsx",
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cmds {
			_ = String(c)
		}
	}
}
