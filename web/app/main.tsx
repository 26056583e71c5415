/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web client's entry: styles, then the app into #app. Everything it needs comes from the API
 * (`/api/config/public`, `/api/auth/session`) once it runs.
 */
import { render } from "preact";
import "./styles.css";
import { App } from "./components/App.tsx";

render(<App />, document.getElementById("app")!);
