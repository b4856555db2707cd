"""The page's modulepreload list: every module the entry imports, read from the sources."""

from __future__ import annotations

from pathlib import Path

from projector.server.module_graph import imports_of, module_graph


def test_imports_are_read_from_static_and_literal_dynamic_imports_not_comments():
    source = """import { a } from './a.js';
export { b } from "../b.js";
import './side.js';
const lazy = () => import('./lazy.js');
// import { old } from './old.js';
/* import { older } from './older.js'; */
import { x } from 'https://example.com/x.js';
"""
    assert imports_of(source) == ["./a.js", "../b.js", "./side.js", "./lazy.js"]


def test_graph_is_every_reachable_module_once_entry_first(tmp_path: Path):
    (tmp_path / "js" / "sub").mkdir(parents=True)
    (tmp_path / "js" / "app.js").write_text("import './sub/one.js';\nimport './two.js';\n")
    (tmp_path / "js" / "sub" / "one.js").write_text("import '../two.js';\n")
    (tmp_path / "js" / "two.js").write_text("import './sub/one.js';\n")  # a cycle
    (tmp_path / "js" / "unused.js").write_text("")
    assert module_graph(tmp_path, "js/app.js") == ("js/app.js", "js/sub/one.js", "js/two.js")
