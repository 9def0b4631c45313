.PHONY: demo test test-fast bench schemas verbs grammar

# Installs the package and runs standalone checks of the examples on the embedded default.
demo:
	scripts/demo.sh

# Installs the dev tools and runs ruff, mypy --strict and the tests.
test:
	scripts/test.sh

# The same without the tests that run benchmark scripts (marked bench) or install the wheel into fresh
# environments (marked install): a quicker loop while working.
test-fast:
	scripts/test.sh -m "not network and not bench and not install"

# Runs the benchmarks (after `make test` has created .venv; store_throughput needs redis-server).
bench:
	.venv/bin/python bench/gate_latency.py
	.venv/bin/python bench/check_path.py
	.venv/bin/python bench/cache_cost.py
	.venv/bin/python bench/store_throughput.py
	.venv/bin/python bench/eval_replay.py
	.venv/bin/python bench/service_load.py
	.venv/bin/python bench/hosts.py

# Regenerates the committed JSON Schemas from the models (a test keeps them equal).
schemas:
	.venv/bin/validator schema check-input > schemas/check-input.schema.json
	.venv/bin/validator schema verdict > schemas/verdict.schema.json
	.venv/bin/validator schema eval-case > schemas/eval-case.schema.json
	.venv/bin/python -c "import json; from validator.integrations.service import create_app; print(json.dumps(create_app().openapi(), indent=2))" > schemas/openapi.json

verbs:
	.venv/bin/python -m validator.devtools.verbs > validator/language/english_verbs.txt

# Rebuilds the compiled grammar after english.lark or Lark changes, and english.toml read ahead after it changes (tests
# keep both equal to a fresh build).
grammar:
	.venv/bin/python -m validator.devtools.grammar > validator/language/english_grammar.json
	.venv/bin/python -m validator.devtools.grammar toml > validator/language/english_toml.json
