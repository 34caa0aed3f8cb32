/// The web app's files, compiled into the binary (`.embedInCode` in Package.swift), so an
/// installed `tally` serves its app with no folder beside it. To add a file: put it in this
/// folder, name it in Package.swift and here.
public enum WebAssets {
    /// (file name, Content-Type, bytes); `index.html` is the page, the rest its assets.
    public static let files: [(name: String, contentType: String, bytes: [UInt8])] = [
        ("index.html", "text/html; charset=utf-8", PackageResources.index_html),
        ("app.css", "text/css; charset=utf-8", PackageResources.app_css),
        ("app.js", "text/javascript; charset=utf-8", PackageResources.app_js),
        ("api.js", "text/javascript; charset=utf-8", PackageResources.api_js),
        ("dom.js", "text/javascript; charset=utf-8", PackageResources.dom_js),
        ("i18n.js", "text/javascript; charset=utf-8", PackageResources.i18n_js),
        ("charts.js", "text/javascript; charset=utf-8", PackageResources.charts_js),
        ("month.js", "text/javascript; charset=utf-8", PackageResources.month_js),
        ("expenses.js", "text/javascript; charset=utf-8", PackageResources.expenses_js),
        ("categories.js", "text/javascript; charset=utf-8", PackageResources.categories_js),
        ("todos.js", "text/javascript; charset=utf-8", PackageResources.todos_js),
        ("recurring.js", "text/javascript; charset=utf-8", PackageResources.recurring_js),
        ("import.js", "text/javascript; charset=utf-8", PackageResources.import_js),
        ("history.js", "text/javascript; charset=utf-8", PackageResources.history_js),
        ("sync.js", "text/javascript; charset=utf-8", PackageResources.sync_js),
        ("members.js", "text/javascript; charset=utf-8", PackageResources.members_js),
        ("accounts.js", "text/javascript; charset=utf-8", PackageResources.accounts_js),
        ("reports.js", "text/javascript; charset=utf-8", PackageResources.reports_js),
        ("people.js", "text/javascript; charset=utf-8", PackageResources.people_js),
        ("split.js", "text/javascript; charset=utf-8", PackageResources.split_js),
        ("icon.svg", "image/svg+xml", PackageResources.icon_svg),
    ]
}
