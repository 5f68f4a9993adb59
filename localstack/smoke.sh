#!/usr/bin/env bash
# Smoke test against LocalStack: either the local runtime on LocalStack's
# DynamoDB and S3 (default), or a cdklocal-deployed stack (--deployed).
#   docker compose -f localstack/docker-compose.yml up -d
#   localstack/smoke.sh             # switchboard dev on LocalStack's DynamoDB + S3
#   localstack/smoke.sh --deployed  # after: source localstack/env; make build; cd infra; npx --yes aws-cdk-local@3 deploy
set -euo pipefail
cd "$(dirname "$0")/.."
source localstack/env
curl -fsS "$AWS_ENDPOINT_URL/_localstack/health" >/dev/null || { echo "LocalStack is not answering on $AWS_ENDPOINT_URL"; exit 1; }

if [ "${1:-}" = "--deployed" ]; then
  # CloudFormation names the function <stack>-JobsFunction<hash>-<random>;
  # the stack gives its name as the output JobsFunctionName.
  stack=${SWITCHBOARD_STACK_NAME:-Switchboard}
  fn=$(aws cloudformation describe-stacks --stack-name "$stack" \
    --query "Stacks[0].Outputs[?OutputKey=='JobsFunctionName'].OutputValue" --output text 2>/dev/null) || fn=
  [ -n "$fn" ] && [ "$fn" != None ] || { echo "smoke: no stack $stack with the output JobsFunctionName on LocalStack; deploy first (see localstack/README.md), or set SWITCHBOARD_STACK_NAME"; exit 1; }
  out=$(mktemp)
  meta=$(aws lambda invoke --function-name "$fn" --payload fileb://events/jobs/heartbeat.json "$out")
  echo "$meta"; cat "$out"; echo
  # aws lambda invoke exits 0 even when the handler returned an error: the
  # error shows only as FunctionError in the answer.
  if grep -q FunctionError <<<"$meta"; then echo "smoke: the jobs function returned an error"; exit 1; fi
  echo "smoke: ok"
  exit 0
fi

go build -o build/switchboard ./cmd/switchboard
build/switchboard dev --addr 127.0.0.1:8089 --data .data/localstack &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS 127.0.0.1:8089/healthz >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS 127.0.0.1:8089/healthz; echo
curl -fsS -XPOST 127.0.0.1:8089/dev/jobs/heartbeat; echo
curl -fsS -XPOST 127.0.0.1:8089/dev/agents/hermes/run -H 'Content-Type: application/json' -d '{"message":"smoke test"}'; echo
echo "smoke: ok"
