"""Drive Apache Superset, headless and in-process, against a release database opened read-only.

Run by the BI virtual environment's python (Superset and duckdb-engine, not rwn_sql: Superset
pins its own SQLAlchemy, pandas and sqlglot), as tests/rp/test_bi_superset.py does:

    python tests/bi/superset_driver.py RELEASE.duckdb REQUEST.json ANSWER.json

It does what a dashboard author does, through Superset's own code, and judges nothing:
  * a fresh Superset home in a temporary folder: a config (a new SECRET_KEY, a SQLite metadata
    database, no cache), then the commands `superset db upgrade`, `superset init` and
    `superset fab create-admin`, run in this process through Flask's CLI test runner;
  * with Flask's test client and Superset's REST API (no server, no port): log in, add the
    release as a database (duckdb-engine, `access_mode=read_only` in the URI, tested by Superset
    before it is saved), list its schemas and each schema's tables and views as the dataset
    editor does, make the requested datasets (Superset reflects their columns) and run each
    requested chart through /api/v1/chart/data;
  * a write through Superset's own engine for that database, which a read-only file refuses.
ANSWER.json holds what Superset returned, with the versions used and the times taken.

REQUEST.json:
    {"datasets": [[schema, table], ...],
     "charts": [{"name": n, "schema": s, "table": t, "groupby": [column, ...],
                 "metrics": [Superset adhoc metric, ...], "filters": [[column, op, value], ...]}, ...]}
with op one of Superset's filter operators ("==", ">=", "<=", "IN", ...). Schemas are spelt as
Superset lists them (duckdb-engine: "<database>.<schema>").
"""
from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import time
from importlib.metadata import version


def check(response, what: str):
    if response.status_code not in (200, 201):
        raise SystemExit(f"{what}: HTTP {response.status_code}: {response.get_data(as_text=True)[:2000]}")
    return response.get_json()


def superset_app(home: str):
    """A Superset app whose home is the empty folder `home`, set up by Superset's own commands;
    returns (app, admin password)."""
    config = os.path.join(home, "superset_config.py")
    with open(config, "w") as f:
        f.write(f"SECRET_KEY = {secrets.token_urlsafe(32)!r}\n"
                f"SQLALCHEMY_DATABASE_URI = {'sqlite:///' + os.path.join(home, 'superset.db')!r}\n"
                "WTF_CSRF_ENABLED = False\n"
                "TALISMAN_ENABLED = False\n"
                "RATELIMIT_ENABLED = False\n"
                # no cache anywhere: every listing and chart is computed from the file
                "CACHE_CONFIG = DATA_CACHE_CONFIG = FILTER_STATE_CACHE_CONFIG = "
                "EXPLORE_FORM_DATA_CACHE_CONFIG = {'CACHE_TYPE': 'NullCache'}\n")
    os.environ.update(SUPERSET_CONFIG_PATH=config, SUPERSET_HOME=home)
    from superset.app import create_app
    from superset.cli.main import superset
    app = create_app()
    password = secrets.token_urlsafe(16)
    runner = app.test_cli_runner()
    for args in (["db", "upgrade"], ["init"],
                 ["fab", "create-admin", "--username", "admin", "--firstname", "Dashboard", "--lastname",
                  "Author", "--email", "admin@example.invalid", "--password", password]):
        done = runner.invoke(superset, args)
        if done.exit_code != 0:
            raise SystemExit(f"superset {' '.join(args)} failed ({done.exit_code}): {done.exception!r}\n"
                             f"{done.output[-4000:]}")
    return app, password


def ask(app, password: str, release: str, request: dict) -> dict:
    """What Superset shows of the release and answers for the requested datasets and charts."""
    client = app.test_client()
    token = check(client.post("/api/v1/security/login", json={
        "username": "admin", "password": password, "provider": "db", "refresh": False}), "login")["access_token"]
    auth = {"Authorization": f"Bearer {token}"}
    uri = f"duckdb:///{os.path.abspath(release)}?access_mode=read_only"
    settings = {"database_name": "rwn release", "sqlalchemy_uri": uri}
    added = client.post("/api/v1/database/", headers=auth, json=settings)
    if added.status_code != 201:     # Superset's answer is "Connection failed": its test says why
        tested = client.post("/api/v1/database/test_connection/", headers=auth, json=settings)
        raise SystemExit(f"add database: HTTP {added.status_code}: {added.get_data(as_text=True)[:1000]}; "
                         f"test_connection: {tested.get_data(as_text=True)[:3000]}")
    database = added.get_json()["id"]
    schemas = check(client.get(f"/api/v1/database/{database}/schemas/?q=(force:!t)", headers=auth),
                    "schemas")["result"]
    tables = {schema: check(client.get(f"/api/v1/database/{database}/tables/?q=(force:!t,schema_name:'{schema}')",
                                       headers=auth), f"tables of {schema}")["result"]
              for schema in schemas}
    dataset_ids, datasets = {}, {}

    def dataset(schema: str, table: str) -> int:
        key = f"{schema}/{table}"
        if key not in dataset_ids:
            dataset_ids[key] = check(client.post("/api/v1/dataset/", headers=auth, json={
                "database": database, "schema": schema, "table_name": table}), f"dataset {key}")["id"]
            made = check(client.get(f"/api/v1/dataset/{dataset_ids[key]}", headers=auth), f"dataset {key}")
            datasets[key] = [c["column_name"] for c in made["result"]["columns"]]
        return dataset_ids[key]

    for schema, table in request.get("datasets", ()):
        dataset(schema, table)
    charts = {}
    for chart in request.get("charts", ()):
        query = {"columns": chart["groupby"], "metrics": chart["metrics"],
                 "orderby": [[c, True] for c in chart["groupby"]],
                 "filters": [{"col": c, "op": op, "val": v} for c, op, v in chart["filters"]], "row_limit": 10_000}
        body = {"datasource": {"id": dataset(chart["schema"], chart["table"]), "type": "table"},
                "queries": [query], "result_format": "json", "result_type": "full", "force": True}
        result = check(client.post("/api/v1/chart/data", headers=auth, json=body),
                       f"chart {chart['name']}")["result"][0]
        charts[chart["name"]] = {"rows": result["data"], "sql": result.get("query")}
    with app.app_context():
        from superset.models.core import Database
        from superset.extensions import db
        model = db.session.get(Database, database)
        try:
            with model.get_sqla_engine() as engine, engine.connect() as connection:
                connection.exec_driver_sql("CREATE TABLE rwn_superset_probe (i INTEGER)")
            write = None
        except Exception as exc:          # noqa: BLE001 - the refusal is what is reported
            write = f"{type(exc).__name__}: {exc}"
    return {"uri": uri, "schemas": schemas, "tables": tables, "datasets": datasets, "charts": charts,
            "write_refused": write}


def main(release: str, request_path: str, answer_path: str) -> None:
    with open(request_path) as f:
        request = json.load(f)
    with tempfile.TemporaryDirectory(prefix="rwn-superset-") as home:
        start = time.perf_counter()
        app, password = superset_app(home)
        setup = time.perf_counter() - start
        answer = ask(app, password, release, request)
        answer["seconds"] = {"setup": round(setup, 1), "queries": round(time.perf_counter() - start - setup, 1)}
    answer["versions"] = {name: version(name) for name in ("apache-superset", "duckdb-engine", "duckdb",
                                                           "sqlalchemy", "flask")}
    with open(answer_path, "w") as f:
        json.dump(answer, f, indent=1, default=str)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
