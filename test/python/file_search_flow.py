"""The Files, Vector Stores and file_search flows a Python user runs, with the real `openai`
package against a router (test/integration/python-sdk.test.ts starts the router and reads what
this prints: one JSON object per line, one line per step; a failure prints its step and error
and exits 1).

Environment: ROUTER_URL (the router's base URL, with /v1), ROUTER_KEY, MODEL (a chat model
whose backend calls file_search once, then answers).
"""
import json
import os
import sys
import traceback

import openai
from openai import OpenAI

RUNBOOK = b"# Pump runbook\n\nERR-4711 means the pump stalled. Run pumpctl reset.\n\nERR-5000 means the valve leaks."
PAYROLL = b"Payroll closes on the 25th; ticket PAY-88 tracks it."
FAQ = b"Office hours are 9 to 5. The pump room is in the basement."

client = OpenAI(base_url=os.environ["ROUTER_URL"], api_key=os.environ["ROUTER_KEY"], max_retries=0, timeout=30)
model = os.environ["MODEL"]
step = "start"


def out(**fields):
    print(json.dumps({"step": step, **fields}), flush=True)


try:
    out(sdk=openai.__version__)

    step = "files.create"
    f = client.files.create(file=("notes.md", b"The door code is 7391."), purpose="user_data")
    got = client.files.retrieve(f.id)
    out(id=f.id, object=f.object, filename=got.filename, bytes=got.bytes, purpose=got.purpose)

    step = "files.create expires_after"
    short = client.files.create(file=("short.txt", b"gone in an hour"), purpose="user_data", expires_after={"anchor": "created_at", "seconds": 3600})
    out(id=short.id, created_at=short.created_at, expires_at=short.expires_at)

    step = "vector_stores.create"
    vs = client.vector_stores.create(name="py-kb")
    out(id=vs.id, object=vs.object, status=vs.status)

    step = "vector_stores.files.upload_and_poll"
    vf = client.vector_stores.files.upload_and_poll(vector_store_id=vs.id, file=("runbook.md", RUNBOOK), poll_interval_ms=50)
    out(id=vf.id, status=vf.status, usage_bytes=vf.usage_bytes)

    step = "vector_stores.file_batches.upload_and_poll"
    batch = client.vector_stores.file_batches.upload_and_poll(vs.id, files=[("payroll.txt", PAYROLL), ("faq.md", FAQ)], poll_interval_ms=50)
    out(id=batch.id, status=batch.status, completed=batch.file_counts.completed, total=batch.file_counts.total)

    step = "vector_stores.search"
    page = client.vector_stores.search(vs.id, query="ERR-4711", max_num_results=3)
    hits = [{"file_id": h.file_id, "filename": h.filename, "score": h.score, "text": h.content[0].text} for h in page.data]
    out(hits=hits, search_query=page.search_query if hasattr(page, "search_query") else None)

    step = "responses.create file_search"
    tools = [{"type": "file_search", "vector_store_ids": [vs.id]}]
    r = client.responses.create(model=model, input="What does ERR-4711 mean?", tools=tools, include=["file_search_call.results"])
    call = r.output[0]
    message = r.output[1]
    out(
        id=r.id,
        status=r.status,
        types=[i.type for i in r.output],
        queries=call.queries,
        results=[{"file_id": x.file_id, "filename": x.filename} for x in (call.results or [])],
        output_text=r.output_text,
        annotations=[a.model_dump() for a in message.content[0].annotations],
    )

    step = "responses.create file_search stream"
    types = []
    final = None
    with client.responses.create(model=model, input="ERR-4711?", tools=tools, stream=True) as stream:
        for event in stream:
            types.append(event.type)
            if event.type == "response.completed":
                final = event.response
    out(types=types, output=[i.type for i in final.output], output_text=final.output_text)

    step = "responses.create input_file by file_id"
    r2 = client.responses.create(model=model, input=[{"role": "user", "content": [{"type": "input_text", "text": "What is the code?"}, {"type": "input_file", "file_id": f.id}]}])
    out(id=r2.id, status=r2.status)

    step = "responses create/retrieve/input_items"
    plain = client.responses.create(model=model, input="hello")
    again = client.responses.retrieve(plain.id)
    items = client.responses.input_items.list(plain.id)
    out(id=plain.id, status=plain.status, output_text=plain.output_text, retrieved=again.id, retrieved_text=again.output_text, items=[{"type": i.type, "role": getattr(i, "role", None)} for i in items.data])

    step = "done"
    out(ok=True)
except Exception as err:  # noqa: BLE001 - reported to the test, which fails on it
    out(error=f"{type(err).__name__}: {err}", trace=traceback.format_exc())
    sys.exit(1)
