/**
 * Words canary texts are composed from (canary-prose.ts, canary-code.ts, canary-data.ts): common
 * English by part of speech, names, places and technical terms, so that generated text has the
 * word lengths, function-word share and vocabulary spread of ordinary requests. Public by nature
 * (the code is open): what a node can't know is which of the many sentences they make comes next.
 */

const list = (s: string): readonly string[] => s.trim().split(/\s+/);

export const NOUNS = list(`
  account action activity address advice age agent agreement air amount analysis animal answer app
  apple application approach area argument arm article aspect assignment attempt attention audience
  author baby background bag balance bank bar base basis battery bed beginning behavior benefit bill
  bird birthday block blog board boat body book border boss bottle box boy brain branch brand bread
  break bridge brother budget bug building bus business button cake call camera campaign candidate
  capital car card career case cash cat category cause cell center chance change channel chapter
  character chart check chicken child choice church city claim class client climate clock club coach
  code coffee collection college color column comment committee community company comparison
  complaint computer concept concern condition conference connection contract control conversation
  cost country course court cover credit crowd culture cup customer cycle dad damage data database
  date daughter day deadline deal debate decision definition degree delivery demand department design
  detail developer device diagram difference dinner direction discount discussion disease document dog
  door draft dream dress driver drive economy edge editor education effect effort election element
  email employee end energy engine engineer entry environment error essay estimate evening event
  evidence example exercise experience experiment expert explanation eye face fact factor family farm
  feature fee feedback field figure file film finding fire fish flight floor flow focus food foot form
  format formula frame friend function fund future game garden gift girl goal government grade graph
  group growth guest guide habit hair half hall hand head health heart heat help history hobby holiday
  home homework horse hospital hotel hour house idea image impact income industry information input
  instance instruction insurance interest interview introduction invoice island issue item job joke
  journey judge key kid kitchen knowledge lab lake language law layer lead leader lesson letter level
  library license life light limit line link list loan location lock loop loss lunch machine manager
  map market marketing match material meal meaning measure meeting member memory message method
  middle mind minute mistake mode model moment money month morning mother mountain mouse movie music
  name nature network news night node note number object offer office option order output owner page
  pain painting paper paragraph parent park part partner party password path patient pattern payment
  peace people percent period person phone photo piece place plan plant platform player poem point
  policy pool position post potato power practice presentation president price problem process product
  profile program project promise proof property proposal purpose quality query question queue quote
  rate reason recipe record region relationship release report request requirement research resource
  response restaurant result resume review risk river road role room rule salary sale sample scene
  schedule school science score screen script season section sector security sentence sequence series
  server service session setting shape share ship shop side sign signal site situation size skill
  sleep slide software solution song source space speaker speech speed sport staff stage standard star
  start state statement station step store story strategy stream street string structure student
  study style subject success suggestion summary supply support surface survey system table task tax
  tea teacher team technique technology term test text theme theory thing thread ticket time title
  tone tool topic tour town track trade training transfer tree trend trip truth type unit university
  update user value variable version video view village visit voice volume water way weather website
  week weekend weight window winter word work worker world writer year
`);

/** Plurals that don't follow the rules. */
export const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  child: 'children',
  person: 'people',
  man: 'men',
  woman: 'women',
  foot: 'feet',
  mouse: 'mice',
  analysis: 'analyses',
  criterion: 'criteria',
  life: 'lives',
  half: 'halves',
  knife: 'knives',
  people: 'people',
  data: 'data',
  news: 'news',
  software: 'software',
  information: 'information',
  advice: 'advice',
  feedback: 'feedback',
  knowledge: 'knowledge',
  research: 'research',
  homework: 'homework',
  fish: 'fish',
};

/** Verbs: the base form, or `base|s|ed|ing` where the rules would get it wrong. */
export const VERBS = list(`
  accept access add adjust affect agree allow analyze answer apply argue arrange ask assume attach
  avoid bake|bakes|baked|baking build|builds|built|building buy|buys|bought|buying calculate call
  cancel change check choose|chooses|chose|choosing clean clear close collect combine compare complete
  compile configure confirm connect consider contain continue convert copy cover create debug decide
  define delete deliver deploy describe design detect develop discuss display do|does|did|doing
  download draw|draws|drew|drawing drive|drives|drove|driving edit enable end enjoy ensure enter
  estimate evaluate expect explain export extract fail feel|feels|felt|feeling fetch fill find|finds|found|finding
  finish fit|fits|fitted|fitting fix follow forget|forgets|forgot|forgetting format generate get|gets|got|getting
  give|gives|gave|giving go|goes|went|going handle happen help hire identify ignore implement import improve
  include increase install keep|keeps|kept|keeping know|knows|knew|knowing learn leave|leaves|left|leaving
  let|lets|let|letting like list load look lose|loses|lost|losing make|makes|made|making manage measure
  meet|meets|met|meeting merge migrate miss move need notice open organize parse pass pay|pays|paid|paying
  pick plan|plans|planned|planning play predict prefer|prefers|preferred|preferring prepare present
  print process produce protect prove provide publish pull push put|puts|put|putting read|reads|read|reading
  receive recommend reduce refactor remember remove rename render repair repeat replace reply report
  request require reset resolve restart return review rewrite|rewrites|rewrote|rewriting run|runs|ran|running
  save say|says|said|saying schedule search see|sees|saw|seeing select sell|sells|sold|selling send|sends|sent|sending
  set|sets|set|setting share show sign simplify skip|skips|skipped|skipping sort split|splits|split|splitting
  start stop|stops|stopped|stopping store structure submit suggest summarize support switch take|takes|took|taking
  teach|teaches|taught|teaching tell|tells|told|telling test think|thinks|thought|thinking train translate
  travel try turn understand|understands|understood|understanding update upload use validate verify visit
  wait want watch win|wins|won|winning work wrap|wraps|wrapped|wrapping write|writes|wrote|writing
`);

export const ADJECTIVES = list(`
  able accurate active actual additional available average bad basic beautiful best better big bright
  broken busy careful certain cheap clean clear close cold common complete complex correct creative
  critical current dark dead deep default detailed different difficult direct dry early easy
  effective efficient empty entire environmental equal exact excellent existing expensive extra fair
  familiar famous fast final financial fine first formal free fresh friendly full funny general
  global good great green hard healthy heavy helpful high historical honest hot huge important
  impossible independent interesting internal large last late legal light likely little local long
  low main major manual medical minor missing modern natural necessary negative new nice normal
  obvious official old online open optional original other overall personal physical political
  poor popular positive possible powerful practical previous primary private professional proper
  public quick quiet random rare ready real recent red relevant remote responsible rich right
  safe same scientific secure senior serious several short significant similar simple single slow
  small smart social soft solid special specific stable standard strange strict strong successful
  sudden sure technical temporary terrible tiny total traditional true typical unique unusual
  useful usual valid various visual warm weak weird whole wide wild wonderful wrong young
`);

export const ADVERBS = list(`
  actually again almost already also always automatically basically carefully certainly clearly
  completely correctly currently definitely directly easily especially even eventually exactly
  finally first fully generally honestly immediately instead just later mainly maybe mostly
  nearly never now often only originally otherwise perhaps probably quickly quite rarely really
  recently regularly simply slightly slowly sometimes soon still suddenly together usually very
`);

export const NAMES = list(`
  Aaron Adam Aisha Alex Alice Amir Ana Andrea Anna Ben Carlos Chen Chloe Daniel David Diego Elena
  Emily Emma Eric Fatima Felix Grace Hannah Hiro Ian Isabel Jack James Jana Jason Javier Jenny John
  Jonas Julia Kai Karen Kevin Laura Leo Lina Lucas Luis Maria Mark Marta Max Maya Michael Mina
  Mohammed Nadia Nina Noah Olga Omar Paul Pedro Priya Rachel Raj Ravi Rosa Ryan Sam Sara Sofia
  Tom Tyler Victor Wei Yuki Zoe
`);

export const PLACES = list(`
  Amsterdam Athens Austin Bangkok Barcelona Berlin Boston Brazil Cairo California Canada Chicago
  China Denver Dublin Egypt England Europe France Germany Greece India Ireland Italy Japan Kenya
  Kyoto Lisbon London Madrid Mexico Milan Montreal Mumbai Nairobi Norway Oslo Paris Peru Portugal
  Prague Rome Seattle Seoul Singapore Spain Stockholm Sweden Sydney Texas Tokyo Toronto Vienna
`);

export const TECH = list(`
  API AWS Android Angular Azure Bash CSS CSV Django Docker Excel Express FastAPI Figma Firebase Flask
  Git GitHub Go GraphQL HTML HTTP Java JavaScript Jira JSON Kafka Kotlin Kubernetes Linux MongoDB
  MySQL Nginx Node.js NumPy Pandas PHP PostgreSQL PowerShell Python PyTorch React Redis Rust S3
  SQL SQLite Spark Spring Swift Terraform TypeScript Ubuntu Unity Vim Vue Windows WordPress YAML
`);

/** Kinds of thing a client asks to have written. */
export const DOCUMENTS = list(`
  article bio blog caption checklist cover description email essay guide headline intro letter
  message note outline paragraph pitch plan poem post proposal recipe report response review script
  slogan song speech story summary table template toast tweet
`);

export const TIMES = [
  'today',
  'tomorrow',
  'yesterday',
  'last week',
  'next week',
  'this morning',
  'tonight',
  'last month',
  'next month',
  'this year',
  'on Monday',
  'on Friday',
  'over the weekend',
  'in the summer',
  'right now',
  'every day',
  'twice a week',
  'after lunch',
];

export const PREPOSITIONS = list(`
  about after against among around at before behind below between by during for from in inside into
  near of on outside over through to toward under with within without
`);

/** Determiners, as often as clients use them. */
export const DETERMINERS = list(`
  a a a a the the the the the the my my my your your this this our their some that every another
  each any
`);

/** Whole short replies, for lines of a few characters. */
export const SHORT_REPLIES = list(`
  hi hey ok yes no thanks sure cool nice great why how what really perfect done again more next go
  continue please wait stop fine good agreed right exactly thx lol hmm wow oh yep nope
`);

export const LANGUAGES = list(`
  French Spanish German Italian Portuguese Japanese Chinese Korean Dutch Polish Turkish Arabic Hindi
`);

/** Function words (a closed class): what a line has as many of as the traffic line it mirrors. */
export const FUNCTION_WORDS = list(`
  a i an to of in is it on at by we he me my or be do if no so up us as am
  the and for you are was not but can all our has had his her its any who how why may did she him one
  they them then than this that with from have will been what when your some were into more also just
  only over such very each were does much many here there these those would could should which their
  about other where while after being every never might shall yours above below under again
`);

/** The most frequent content words of English, drawn more often than the rest. */
export const COMMON_NOUNS = list(`
  time year people way day thing world life hand part child eye place week case point number group
  problem fact home water room money story month lot book job word business issue side kind head house
  friend hour game line end name team minute idea body information back level office door health person
  night reason result change morning research moment air force example code data file list question answer
  text email phone car city school family work company system program
`);
export const COMMON_VERBS = list(`
  get|gets|got|getting make|makes|made|making go|goes|went|going know|knows|knew|knowing
  take|takes|took|taking see|sees|saw|seeing come|comes|came|coming think|thinks|thought|thinking look want
  give|gives|gave|giving use find|finds|found|finding tell|tells|told|telling ask work seem feel|feels|felt|feeling
  try leave|leaves|left|leaving call need keep|keeps|kept|keeping help start show play run|runs|ran|running move
  like live write|writes|wrote|writing read|reads|read|reading learn change add send|sends|sent|sending fix check
`);
export const COMMON_ADJECTIVES = list(`
  good new first last long great little own other old right big high different small large next early
  young important few public bad same able best better sure free true whole clear easy hard late simple
  short quick real full nice
`);
