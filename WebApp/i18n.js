// Korean and English: the words of the app, money per currency (₩12,000, $12.50) and dates
// per locale, through the browser's Intl. The language is the browser's unless chosen.

import { minorUnitDigits } from "./currencies.js";

const LANGUAGE_KEY = "tally.language";

const words = {
  en: {
    appName: "Tally", skip: "Skip to content", language: "Language", signOut: "Sign out", loading: "Loading…", screens: "Screens",
    signIn: "Sign in", signInTitle: "Sign in to your ledger", tokenLabel: "Token",
    tokenHint: "Create one on the server: tally token create --name phone --scope read,write", badToken: "This token is unknown or revoked.",
    readOnly: "Read-only: this token may look, not change.",
    memberName: "Name", password: "Password", householdLabel: "Household", householdHint: "The household's name on this server, as its owner gave it to you.",
    wrongCredentials: "Wrong name or password.", slowDown: "Too many tries. Wait a little and try again.", signedOut: "You were signed out. Sign in again.",
    useToken: "Sign in with a token instead", signInWithToken: "Use this token", joinTitle: "Join the household", join: "Join",
    newPasswordHint: "Choose a password of at least 10 characters.", signedInAs: "{name} ({role})", signedInToken: "token {name}", household: "Household",
    members: "Members", noMembers: "No members yet.", invite: "Invite someone", inviteRole: "As", makeInvite: "Make an invitation link",
    inviteMade: "Invitation link made.", inviteOnce: "Send this link to the person you invite. It works once, for 7 days.", inviteLink: "Invitation link",
    role_owner: "owner", role_member: "member", "role_read-only": "read-only",

    importNav: "Import", importTitle: "Import a statement", statementFile: "Statement file", statementHint: "A card or bank statement: CSV, Excel (.xlsx) or OFX. Nothing is written until you import.",
    layout: "Layout", recognise: "Recognise from the header", account: "Account or card", accountHint: "Optional: keeps the same purchase on two cards apart.",
    skipBadRows: "Import the readable rows and skip the others", preview: "Preview", chooseFile: "Choose a file first.",
    previewSummary: "{create} to create, {duplicates} already in the ledger, {skipped} blank or total rows, {bad} unreadable.",
    importRows: "Import {n} rows", importDone: "Imported {n} rows.", badRows: "Rows that cannot be read", rowNumber: "row {n}", refund: "Refund",
    pastImports: "Past imports", noImports: "Nothing imported yet.", importedCount: "{n} expenses",
    asOfOpen: "See an earlier moment", asOfLabel: "The ledger as it was at", asOfHint: "Your local time. Everything is read-only there.",
    asOfShow: "Show", asOfInvalid: "Choose a day and a time.", backToNow: "Back to now",
    asOfShowing: "The ledger as it was at {when} (log index {index}). Read-only.", asOfReadOnly: "Read-only: this is the ledger as it was.",
    month: "Month", expenses: "Expenses", categories: "Categories", todos: "To-dos", history: "History", sync: "Sync",
    previousMonth: "Previous month", nextMonth: "Next month", income: "Income", expense: "Expense", net: "Net", count: "{n} entries", countOne: "{n} entry",
    byCategory: "Spending by category", byPayment: "By payment method", monthsOverview: "Months overview", allCategories: "All categories",
    noCategory: "No category", noPayment: "Not given", nothingThisMonth: "Nothing recorded this month.", seeExpenses: "See this month's expenses",
    drillHint: "Choose a category to see its sub-categories.", tooLarge: "too large to show", inCategory: "Spending in {name}",
    filters: "Filters", category: "Category", tag: "Tag", kind: "Kind", text: "Text", any: "Any", search: "Search in payee, memo, payment",
    addExpense: "Add expense", editExpense: "Edit expense", newExpense: "New expense", noExpenses: "No expenses match.", loadMore: "Load more",
    amount: "Amount", currency: "Currency", date: "Date", payee: "Payee", payment: "Payment method", memo: "Memo", tags: "Tags",
    tagsHint: "Separate tags with commas.", receipt: "Receipt photo", receiptHint: "Take a photo or choose a file.", receiptOf: "Receipt of {what}",
    save: "Save", cancel: "Cancel", delete: "Delete", confirmDelete: "Really delete", saved: "Saved.", deleted: "Deleted.",
    showHistory: "History of this entry", endOfList: "That is all.", attachmentMissing: "The photo has not arrived from the other replica yet.",
    addCategory: "Add category", name: "Name", parent: "Parent", topLevel: "(top level)", icon: "Icon", rename: "Edit", move: "Move",
    merged: "Merged duplicates", mergedInto: "merged into {name}", noMerges: "No duplicates were merged.", noCategories: "No categories yet.",
    addTodo: "Add to-do", title: "Title", challenge: "Challenge (one check a day)", startDate: "Start date", days: "Days",
    done: "Done", notDone: "Not done", checkToday: "Check today", checkedToday: "Checked today", streak: "Current streak: {n} days", streakOne: "Current streak: {n} day", longest: "longest {n}", rate: "{p}% of days so far",
    progress: "{p}% done", noTodos: "No to-dos yet.", dayChecked: "{date}: done", dayOpen: "{date}: not done", dayOutside: "{date}",
    completed: "Completed", checks: "Daily checks",
    auditTrail: "Audit trail", conflicts: "Conflict journal", noConflicts: "No sync has overwritten anything.", entityId: "Entity id",
    show: "Show", who: "Who", when: "When", what: "What changed", replica: "Replica", won: "Kept", lost: "Overwritten", property: "Field",
    created: "created", updated: "updated", deletedOp: "deleted", noEvents: "No events for this id.", mergedNote: "Merged into {id}: {reason}",
    thisReplica: "This replica", peers: "Peers", lastSync: "Last sync", never: "never", eventsBehind: "Views behind the log",
    unsent: "Events the peer lacks", lastError: "Last error", origins: "Events per origin", syncNow: "Sync now", noPeers: "No peers configured (tally peers add).",
    logIndex: "Log index", missingAttachments: "Attachments not yet arrived", live: "Updated.", required: "Required.",
    expenseKind: "Expense", incomeKind: "Income", photoUploading: "Uploading photo…", events: "Events",
    feedLimited: "Live updates paused: this token already follows the ledger in as many windows as the service allows. Close one, or use a token per device.",
    feedOffline: "Live updates paused: reconnecting…",
    deleteNamed: "Delete {name}", armed: "Tap again to delete {name}.", today: "today", screenFailed: "This screen could not be shown: {message}",
    reload: "Reload the app", retry: "Try again", tokenFormat: "A token is printable characters without spaces (tly_…).",
    receiptFile: "Receipt file", thisMonthsTotals: "Totals of the whole month",
    budgets: "Budgets", budget: "budget", allSpending: "All spending", deletedCategory: "A deleted category", noBudgets: "No budget applies to this month.", setBudget: "Set a budget",
    recurring: "Recurring", addRule: "Add recurring entry", noRules: "No recurring entries yet.", daily: "Daily", weekly: "Weekly",
    monthly: "Monthly", yearly: "Yearly", until: "until {date}", times: "{n} times", from: "from {date}", nextOccurrences: "Next",
    noMore: "No more occurrences.", skip: "Skip", endToday: "End today", cadence: "Repeats", monthEnd: "Months without that day",
    monthEndHint: "For a start on the 29th–31st.", clamp: "Use the month's last day", skipMonth: "Skip the month",
    budgetAmount: "Amount per month", onlyThisMonth: "Only for {month} (otherwise from this month on)", overBy: "{amount} over", left: "{amount} left",
    accounts: "Accounts", balances: "Balances", noAccounts: "No accounts yet.", noAccount: "None", notHeldHere: "(not on this device)", totalIn: "Total in {currency}", add: "Add",
    kind_bank: "bank", kind_card: "card", kind_cash: "cash", kind_savings: "savings", kind_loan: "loan",
    otherCurrency: "{n} expenses in another currency are not in this balance.", otherCurrencyOne: "1 expense in another currency is not in this balance.",
    addAccount: "Add an account", accountKind: "Kind", openingBalance: "Opening balance", openingHint: "What it holds today; negative for what is owed (a card, a loan).",
    addTransfer: "Move money", transferHint: "Between two accounts: not spending, so the month's totals and budgets leave it out.",
    transferFrom: "From", transferTo: "To", moveMoney: "Move", reports: "Reports", reportIn: "The last 12 months in {currency}",
    spendingByMonth: "Spending by month", reportTable: "Spending by category and month, and the totals, in {currency}", netWorth: "Net worth",
    noReport: "Nothing to report yet.",
    cardBills: "Card bills", statement: "{month} statement ({from} – {to})", bill_paid: "paid", bill_nothing: "nothing to pay", bill_due: "due {due}", bill_overdue: "overdue since {due}",
    people: "Settle up", whoOwes: "Who owes whom", owes: "owes {amount}", isOwed: "is owed {amount}", settled: "settled",
    noSharing: "No shared expenses yet: an expense's \"paid by\" and \"shared with\" make them.", settleUp: "The fewest payments that settle it",
    pays: "{from} pays {to} {amount}", markPaid: "Paid", allSettled: "Everyone is settled.",
    splitReceipt: "Split receipt", splitHint: "Share the payment out among lines of their own categories; they must add up to it.",
    addLine: "Add line", unsplit: "Don't split", splitAddsUp: "The lines add up to the payment.", splitLeft: "{amount} left to split",
    splitOver: "{amount} more than the payment", lineCategory: "Line {n}: category", lineAmount: "Line {n}: amount", lineMemo: "Line {n}: note",
    removeLine: "Remove line {n}",
    splitNeedsAttention: "Needs attention: after edits on two devices the lines add up to {assigned}, not {amount}. Correct them and save.",
    reconcile: "Reconcile", reconcileHint: "Compare an account with its statement: what it shows up to that day is cleared.",
    reconcileThrough: "Statement date", statementBalance: "Statement balance", reconcileAccount: "Account",
    reconciledThrough: "Reconciled through {day}", difference: "Difference {amount}", noDifference: "Matches the statement",
    clearedLines: "{n} cleared lines", changedSince: "Changed after it was reconciled:",
    whoPaid: "Who paid, who shares it", paidBy: "Paid by", sharedWith: "Shared with", splitHow: "Split",
    sharesHint: "Names, e.g. minji, jisoo — or with shares or amounts: minji=2, jisoo=1", sharesPlaceholder: "minji, jisoo",
    split_equal: "equally", split_shares: "by shares", split_amounts: "by amounts",
    amountArriving: "Amount arriving", amountArrivingHint: "In the receiving account's currency.",
    noStatementBalance: "no statement balance given", expensesOwnCategory: "(the expense's category)",
    countedBy: "Count card purchases", byPurchase: "By purchase date", byBill: "By bill (when due)",
    yearInReview: "{year} in review", yearIncome: "Income", yearSpending: "Spending", yearBefore: "the year before: {amount}",
    busiestMonth: "Busiest month: {month} ({amount})", whereItWent: "Where it went", largestExpenses: "Largest expenses",
    netWorthYear: "Net worth: {start} → {end}", noYear: "Nothing was recorded this year.",
    needsAttention: "{n} shared expenses have parts that no longer add up: look at them.", needsAttentionOne: "1 shared expense has parts that no longer add up: look at it.",
  },
  ko: {
    appName: "탤리", skip: "본문으로 건너뛰기", language: "언어", signOut: "로그아웃", loading: "불러오는 중…", screens: "화면",
    signIn: "로그인", signInTitle: "가계부에 로그인", tokenLabel: "토큰",
    tokenHint: "서버에서 만드세요: tally token create --name phone --scope read,write", badToken: "알 수 없거나 폐기된 토큰입니다.",
    readOnly: "읽기 전용: 이 토큰으로는 볼 수만 있습니다.",
    memberName: "이름", password: "비밀번호", householdLabel: "가계부", householdHint: "이 서버에서 쓰는 가계부 이름 (주인이 알려준 이름).",
    wrongCredentials: "이름이나 비밀번호가 틀렸습니다.", slowDown: "시도가 너무 많습니다. 잠시 후 다시 해 보세요.", signedOut: "로그아웃되었습니다. 다시 로그인하세요.",
    useToken: "토큰으로 로그인", signInWithToken: "이 토큰 쓰기", joinTitle: "가계부에 참여", join: "참여",
    newPasswordHint: "10자 이상의 비밀번호를 정하세요.", signedInAs: "{name} ({role})", signedInToken: "토큰 {name}", household: "가계부",
    members: "구성원", noMembers: "아직 구성원이 없습니다.", invite: "초대하기", inviteRole: "역할", makeInvite: "초대 링크 만들기",
    inviteMade: "초대 링크를 만들었습니다.", inviteOnce: "초대할 사람에게 이 링크를 보내세요. 7일 동안 한 번만 쓸 수 있습니다.", inviteLink: "초대 링크",
    role_owner: "주인", role_member: "구성원", "role_read-only": "읽기 전용",
    importNav: "가져오기", importTitle: "명세서 가져오기", statementFile: "명세서 파일", statementHint: "카드·은행 명세서: CSV, 엑셀(.xlsx), OFX. 가져오기 전에는 아무것도 기록하지 않습니다.",
    layout: "양식", recognise: "머리글로 알아내기", account: "계좌 또는 카드", accountHint: "선택: 두 카드의 같은 결제를 구분합니다.",
    skipBadRows: "읽을 수 있는 행만 가져오고 나머지는 건너뛰기", preview: "미리 보기", chooseFile: "먼저 파일을 고르세요.",
    previewSummary: "새로 만들 행 {create}개, 이미 있는 행 {duplicates}개, 빈 행·합계 행 {skipped}개, 읽을 수 없는 행 {bad}개.",
    importRows: "{n}개 행 가져오기", importDone: "{n}개 행을 가져왔습니다.", badRows: "읽을 수 없는 행", rowNumber: "{n}행", refund: "환불",
    pastImports: "지난 가져오기", noImports: "아직 가져온 것이 없습니다.", importedCount: "지출 {n}건",
    asOfOpen: "지난 시점 보기", asOfLabel: "이 시점의 장부", asOfHint: "이 기기의 현지 시각입니다. 지난 시점은 볼 수만 있습니다.",
    asOfShow: "보기", asOfInvalid: "날짜와 시각을 고르세요.", backToNow: "지금으로 돌아가기",
    asOfShowing: "{when} 시점의 장부입니다 (로그 {index}번까지). 읽기 전용.", asOfReadOnly: "읽기 전용: 지난 시점의 장부입니다.",
    month: "월별", expenses: "지출 내역", categories: "분류", todos: "할 일", history: "기록", sync: "동기화",
    previousMonth: "이전 달", nextMonth: "다음 달", income: "수입", expense: "지출", net: "합계", count: "{n}건",
    byCategory: "분류별 지출", byPayment: "결제 수단별", monthsOverview: "월별 추이", allCategories: "모든 분류",
    noCategory: "분류 없음", noPayment: "미지정", nothingThisMonth: "이번 달 기록이 없습니다.", seeExpenses: "이번 달 지출 내역 보기",
    drillHint: "분류를 누르면 하위 분류를 봅니다.", tooLarge: "표시하기에 너무 큼", inCategory: "{name}의 지출",
    filters: "필터", category: "분류", tag: "태그", kind: "종류", text: "검색어", any: "전체", search: "거래처, 메모, 결제 수단에서 찾기",
    addExpense: "지출 추가", editExpense: "지출 수정", newExpense: "새 지출", noExpenses: "해당하는 내역이 없습니다.", loadMore: "더 보기",
    amount: "금액", currency: "통화", date: "날짜", payee: "거래처", payment: "결제 수단", memo: "메모", tags: "태그",
    tagsHint: "쉼표로 구분하세요.", receipt: "영수증 사진", receiptHint: "사진을 찍거나 파일을 고르세요.", receiptOf: "{what} 영수증",
    save: "저장", cancel: "취소", delete: "삭제", confirmDelete: "정말 삭제", saved: "저장했습니다.", deleted: "삭제했습니다.",
    showHistory: "이 항목의 기록", endOfList: "끝입니다.", attachmentMissing: "사진이 다른 복제본에서 아직 도착하지 않았습니다.",
    addCategory: "분류 추가", name: "이름", parent: "상위 분류", topLevel: "(최상위)", icon: "아이콘", rename: "수정", move: "이동",
    merged: "병합된 중복 분류", mergedInto: "{name}(으)로 병합됨", noMerges: "병합된 중복이 없습니다.", noCategories: "아직 분류가 없습니다.",
    addTodo: "할 일 추가", title: "제목", challenge: "챌린지 (하루 한 번 체크)", startDate: "시작일", days: "일수",
    done: "완료", notDone: "미완료", checkToday: "오늘 체크", checkedToday: "오늘 체크함", streak: "현재 연속: {n}일", longest: "최장 {n}일", rate: "지금까지 {p}% 달성",
    progress: "{p}% 달성", noTodos: "아직 할 일이 없습니다.", dayChecked: "{date}: 완료", dayOpen: "{date}: 미완료", dayOutside: "{date}",
    completed: "완료됨", checks: "일일 체크",
    auditTrail: "변경 기록", conflicts: "충돌 기록", noConflicts: "동기화로 덮어쓴 값이 없습니다.", entityId: "항목 ID",
    show: "보기", who: "누가", when: "언제", what: "바뀐 내용", replica: "복제본", won: "유지된 값", lost: "덮어쓴 값", property: "항목",
    created: "생성", updated: "수정", deletedOp: "삭제", noEvents: "이 ID의 기록이 없습니다.", mergedNote: "{id}(으)로 병합: {reason}",
    thisReplica: "이 복제본", peers: "피어", lastSync: "마지막 동기화", never: "없음", eventsBehind: "로그보다 늦은 뷰",
    unsent: "피어에 없는 이벤트", lastError: "마지막 오류", origins: "출처별 이벤트", syncNow: "지금 동기화", noPeers: "설정된 피어가 없습니다 (tally peers add).",
    logIndex: "로그 위치", missingAttachments: "아직 도착하지 않은 첨부", live: "갱신되었습니다.", required: "필수입니다.",
    expenseKind: "지출", incomeKind: "수입", photoUploading: "사진 올리는 중…", events: "이벤트",
    feedLimited: "실시간 갱신 중지: 이 토큰으로 열 수 있는 창의 수를 넘었습니다. 창을 하나 닫거나 기기마다 토큰을 따로 쓰세요.",
    feedOffline: "실시간 갱신 중지: 다시 연결하는 중…",
    deleteNamed: "{name} 삭제", armed: "한 번 더 누르면 {name}을(를) 삭제합니다.", today: "오늘", screenFailed: "이 화면을 보여줄 수 없습니다: {message}",
    reload: "앱 다시 불러오기", retry: "다시 시도", tokenFormat: "토큰은 공백 없는 인쇄 가능한 문자입니다 (tly_…).",
    receiptFile: "영수증 파일", thisMonthsTotals: "이번 달 전체 합계",
    budgets: "예산", budget: "예산", allSpending: "전체 지출", deletedCategory: "삭제된 분류", noBudgets: "이번 달에 적용되는 예산이 없습니다.", setBudget: "예산 설정",
    recurring: "반복", addRule: "반복 항목 추가", noRules: "아직 반복 항목이 없습니다.", daily: "매일", weekly: "매주",
    monthly: "매월", yearly: "매년", until: "{date}까지", times: "{n}회", from: "{date}부터", nextOccurrences: "다음",
    noMore: "남은 반복이 없습니다.", skip: "건너뛰기", endToday: "오늘로 끝내기", cadence: "반복 주기", monthEnd: "그 날짜가 없는 달",
    monthEndHint: "29–31일에 시작하는 경우.", clamp: "그 달의 마지막 날", skipMonth: "그 달은 건너뛰기",
    budgetAmount: "월 금액", onlyThisMonth: "{month}에만 (아니면 이번 달부터 계속)", overBy: "{amount} 초과", left: "{amount} 남음",
    accounts: "자산", balances: "잔액", noAccounts: "아직 자산이 없습니다.", noAccount: "없음", notHeldHere: "(이 기기에 없음)", totalIn: "{currency} 합계", add: "추가",
    kind_bank: "은행", kind_card: "카드", kind_cash: "현금", kind_savings: "저축", kind_loan: "대출",
    otherCurrency: "다른 통화의 지출 {n}건은 이 잔액에 들어가지 않습니다.",
    addAccount: "자산 추가", accountKind: "종류", openingBalance: "시작 잔액", openingHint: "오늘 들어 있는 금액. 갚을 돈은 음수로 (카드, 대출).",
    addTransfer: "이체", transferHint: "두 자산 사이의 이체는 지출이 아니므로 월 합계와 예산에 들어가지 않습니다.",
    transferFrom: "보내는 곳", transferTo: "받는 곳", moveMoney: "이체하기", reports: "리포트", reportIn: "최근 12개월 ({currency})",
    spendingByMonth: "월별 지출", reportTable: "분류별·월별 지출과 합계 ({currency})", netWorth: "순자산",
    noReport: "아직 리포트할 내용이 없습니다.",
    cardBills: "카드 청구서", statement: "{month} 청구 ({from} – {to})", bill_paid: "납부 완료", bill_nothing: "청구 없음", bill_due: "{due} 결제 예정", bill_overdue: "{due}부터 연체",
    people: "정산", whoOwes: "누가 누구에게", owes: "{amount} 갚을 돈", isOwed: "{amount} 받을 돈", settled: "정산 완료",
    noSharing: "아직 나눠 낸 지출이 없습니다.", settleUp: "가장 적은 송금으로 정산하기",
    pays: "{from} → {to} {amount}", markPaid: "보냈음", allSettled: "모두 정산되었습니다.",
    splitReceipt: "영수증 나누기", splitHint: "한 번의 결제를 항목별 분류로 나눕니다. 합계가 결제 금액과 같아야 합니다.",
    addLine: "항목 추가", unsplit: "나누지 않기", splitAddsUp: "항목 합계가 결제 금액과 같습니다.", splitLeft: "{amount} 남음",
    splitOver: "결제 금액보다 {amount} 많음", lineCategory: "{n}번 항목 분류", lineAmount: "{n}번 항목 금액", lineMemo: "{n}번 항목 메모",
    removeLine: "{n}번 항목 삭제",
    splitNeedsAttention: "확인 필요: 두 기기의 수정이 합쳐져 항목 합계가 {amount}이 아닌 {assigned}입니다. 고쳐서 저장하세요.",
    reconcile: "대사(잔액 맞추기)", reconcileHint: "계좌를 명세서와 맞춥니다. 그날까지의 내역은 확인 완료로 표시됩니다.",
    reconcileThrough: "명세서 기준일", statementBalance: "명세서 잔액", reconcileAccount: "계좌",
    reconciledThrough: "{day}까지 대사 완료", difference: "차액 {amount}", noDifference: "명세서와 일치",
    clearedLines: "확인된 내역 {n}건", changedSince: "대사 후에 바뀐 내역:",
    whoPaid: "누가 냈고 누구와 나누나", paidBy: "낸 사람", sharedWith: "나눌 사람", splitHow: "나누는 방법",
    sharesHint: "이름: 예) 민지, 지수 — 비율이나 금액으로: 민지=2, 지수=1", sharesPlaceholder: "민지, 지수",
    split_equal: "똑같이", split_shares: "비율대로", split_amounts: "금액대로",
    amountArriving: "받는 금액", amountArrivingHint: "받는 계좌의 통화로.",
    noStatementBalance: "명세서 잔액 없음", expensesOwnCategory: "(지출의 분류)",
    countedBy: "카드 사용액 집계 기준", byPurchase: "사용일 기준", byBill: "결제일(청구서) 기준",
    yearInReview: "{year}년 결산", yearIncome: "수입", yearSpending: "지출", yearBefore: "지난해: {amount}",
    busiestMonth: "가장 많이 쓴 달: {month} ({amount})", whereItWent: "어디에 썼나", largestExpenses: "가장 큰 지출",
    netWorthYear: "순자산: {start} → {end}", noYear: "올해 기록이 없습니다.",
    needsAttention: "나눈 금액이 합계와 맞지 않는 지출 {n}건이 있습니다. 확인해 주세요.",
  },
};

let language = chooseLanguage();

function chooseLanguage() {
  const chosen = localStorage.getItem(LANGUAGE_KEY);
  if (chosen === "ko" || chosen === "en") return chosen;
  return (navigator.languages ?? [navigator.language]).some((tag) => String(tag).toLowerCase().startsWith("ko")) ? "ko" : "en";
}

export const currentLanguage = () => language;
export const locale = () => (language === "ko" ? "ko-KR" : "en-US");

export function setLanguage(value) {
  language = value === "ko" ? "ko" : "en";
  localStorage.setItem(LANGUAGE_KEY, language);
  document.documentElement.lang = language;
}

// The word for `key`, with {name} placeholders filled from `values` (and `KEYOne`, where a
// language has it, when `values.n` is 1: "1 entry", "2 entries").
export function t(key, values = {}) {
  const one = values.n === 1 ? words[language][`${key}One`] : undefined;
  const text = one ?? words[language][key] ?? words.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

// How many digits a currency's minor unit has (KRW 0, USD 2, IQD 3): the service's own table
// (currencies.js), not the browser's, which differs for some currencies.
export function fractionDigits(currency) {
  return minorUnitDigits[currency] ?? 2;
}

// An amount in minor units as money: 12000 KRW → ₩12,000; 1250 USD → $12.50. Null (a total
// too large for the service to add up) shows as such.
export function money(minor, currency) {
  if (minor === null || minor === undefined) return t("tooLarge");
  const digits = fractionDigits(currency);
  const value = Number(minor) / 10 ** digits;
  try {
    return new Intl.NumberFormat(locale(), { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
  } catch {
    return `${value} ${currency}`;
  }
}

// Typed money text ("12.50", "12,000", "₩12,000") as minor units; null when it is not a plain
// number with at most the currency's fraction digits (the API is then asked anyway and says
// why). A comma only groups thousands: "12,50" is not read as 12.50, nor as 1,250.
export function toMinorUnits(text, currency) {
  const trimmed = text.trim().replace(/[\s₩$€¥£]/g, "");
  if (!/^-?(\d+|\d{1,3}(,\d{3})+)(\.\d+)?$/.test(trimmed)) return null;
  const cleaned = trimmed.replace(/,/g, "");
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(cleaned);
  const digits = fractionDigits(currency);
  if (!match || (match[3] ?? "").length > digits) return null;
  const minor = BigInt(match[2] + (match[3] ?? "").padEnd(digits, "0"));
  const signed = match[1] ? -minor : minor;
  return signed > BigInt(Number.MAX_SAFE_INTEGER) || signed < -BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(signed);
}

// Minor units as the text a person edits: 1250 USD → "12.50".
export function fromMinorUnits(minor, currency) {
  const digits = fractionDigits(currency);
  return digits === 0 ? String(minor) : (Number(minor) / 10 ** digits).toFixed(digits);
}

// The calendar date of an ISO date-time as it was written (its own offset), formatted.
export function day(iso, style = "medium") {
  const [y, m, d] = iso.slice(0, 10).split("-").map(Number);
  return new Intl.DateTimeFormat(locale(), { dateStyle: style, timeZone: "UTC" }).format(new Date(Date.UTC(y, m - 1, d)));
}

// "YYYY-MM" as a month name: "November 2026", "2026년 11월".
export function monthName(month, style = "long") {
  const [y, m] = month.split("-").map(Number);
  return new Intl.DateTimeFormat(locale(), { year: "numeric", month: style, timeZone: "UTC" }).format(new Date(Date.UTC(y, m - 1, 1)));
}

// An instant (ISO 8601) in this browser's time zone.
export function moment(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(date);
}
